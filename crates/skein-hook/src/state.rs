//! State shared by parallel hook processes, under a state root (default
//! `~/.local/state/skein`, resolved by the caller):
//!
//! ```text
//! sessions.json                       session id → current request (atomic replace, sessions.lock)
//! requests/<session>/hook-events.jsonl            audit lines before the first request
//! requests/<session>/<request>/request.json       the request record (atomic replace, request.lock)
//! requests/<session>/<request>/hook-events.jsonl  audit trail (append under request.lock)
//! requests/<session>/<request>/context.md         the prompt, then <context> extracts from subagents
//! requests/<session>/<request>/work/              <work> files from subagents
//! requests/<session>/<request>/session-log.md     Stop snapshot (written by the snapshot pass)
//! requests/<session>/<request>/session-logs/      the request's transcript and its agents'
//! ```
//! Every id is re-checked with `safe_component` before it becomes a path component; every
//! file is created with mode 0600 and every directory with 0700.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use skein_store::{FileLock, LockError, NameError, safe_component, write_atomic};

use skein_core::time::{format_compact_ms, format_ms, unix_ms};

pub const SESSIONS_FILE: &str = "sessions.json";
pub const REQUEST_FILE: &str = "request.json";
pub const AUDIT_FILE: &str = "hook-events.jsonl";
pub const CONTEXT_FILE: &str = "context.md";
pub const WORK_DIR: &str = "work";
pub const SNAPSHOT_FILE: &str = "session-log.md";
/// The request's transcripts: `snapshot.jsonl` and a copy of each subagent's.
pub const SESSION_LOGS_DIR: &str = "session-logs";
const PRUNE_AFTER_MS: u64 = 30 * 24 * 3600 * 1000;

/// The global session map.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMap {
    #[serde(default)]
    pub sessions: BTreeMap<String, SessionEntry>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEntry {
    /// Current request id.
    pub request: Option<String>,
    /// Requests opened in this session so far (the request id counter).
    #[serde(default)]
    pub opened: u64,
    #[serde(default)]
    pub updated_ms: u64,
}

/// One open item of the session's task list: a `TodoWrite` todo or a `TaskCreate` task (see
/// `skein_analysis::TaskTracker`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// The task id (`TaskCreate` tasks; a todo's own id when it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The todo's content or the task's subject.
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub status: String,
    #[serde(
        rename = "activeForm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// `todo_write` or `tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A subagent that finished inside a request (linked to its parent session and request).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRecord {
    pub agent_id: String,
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub transcript: Option<String>,
    pub stopped_at: String,
    #[serde(default)]
    pub context_blocks: usize,
    #[serde(default)]
    pub work_files: Vec<String>,
}

/// `request.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    pub id: String,
    pub session: String,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub prompt_id: Option<String>,
    /// Uuid of the prompt's `user` record, once found in the transcript.
    #[serde(default)]
    pub start_uuid: Option<String>,
    /// Transcript size when the request opened: the request's records start near here.
    #[serde(default)]
    pub start_offset: Option<u64>,
    pub opened_at: String,
    /// Opened by a Stop/SubagentStop that found no request (prompt unknown).
    #[serde(default)]
    pub implicit: bool,
    #[serde(default)]
    pub todos: Option<Vec<Todo>>,
    #[serde(default)]
    pub agents: Vec<AgentRecord>,
}

/// What is known when a request opens (every text already redacted when redaction is on).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRequest {
    pub prompt: Option<String>,
    pub prompt_id: Option<String>,
    /// The prompt record's uuid, when already known (an implicit request found its prompt).
    pub start_uuid: Option<String>,
    pub start_offset: Option<u64>,
    pub implicit: bool,
    /// The start of `context.md`, written before the request becomes the current one.
    pub context: Option<String>,
}

/// A newly opened request plus anything worth logging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub record: RequestRecord,
    pub warnings: Vec<String>,
}

/// One line of `hook-events.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditLine {
    pub ts: String,
    pub event: String,
    pub session: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// `ok`, `skipped`, `refused` or `error`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the event was about.
    #[serde(default, flatten)]
    pub about: EventFacts,
    pub pid: u32,
    pub ms: u64,
}

/// What an event was about, for its audit line (all redacted when redaction is on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventFacts {
    /// Tool events: the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool events: the call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// PreCompact / PostCompact: `manual` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// SessionEnd: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// UserPromptSubmit: the prompt's length in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_chars: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// PreToolUse with the loop guard: `block` when the call was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("corrupt state file {path}: {source}")]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("refused id: {0}")]
    BadId(#[from] NameError),
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StateError + '_ {
    move |source| StateError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Handle on the state root.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
    lock_timeout: Duration,
}

impl StateDir {
    pub fn new(root: impl Into<PathBuf>, lock_timeout: Duration) -> Self {
        Self {
            root: root.into(),
            lock_timeout,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    pub fn session_dir(&self, session: &str) -> Result<PathBuf, StateError> {
        Ok(self.root.join("requests").join(safe_component(session)?))
    }

    pub fn request_dir(&self, session: &str, request: &str) -> Result<PathBuf, StateError> {
        Ok(self.session_dir(session)?.join(safe_component(request)?))
    }

    /// Reads `sessions.json` without locking (it is only ever replaced atomically).
    pub fn read_sessions(&self) -> Result<SessionMap, StateError> {
        read_json(&self.root.join(SESSIONS_FILE)).map(Option::unwrap_or_default)
    }

    /// The session's current request id, if any.
    pub fn current_request(&self, session: &str) -> Result<Option<String>, StateError> {
        safe_component(session)?;
        Ok(self
            .read_sessions()?
            .sessions
            .remove(session)
            .and_then(|e| e.request))
    }

    /// Opens a new request and makes it the session's current one. The id is
    /// `<UTC time>-<per-session counter>`, so ids sort in opening order (the clock is read
    /// under the sessions lock, so a later opening never gets an earlier time). A corrupt
    /// `sessions.json` is moved aside (reported in `warnings`) and rebuilt.
    pub fn open_request(
        &self,
        session: &str,
        clock: fn() -> SystemTime,
        new: NewRequest,
    ) -> Result<Opened, StateError> {
        safe_component(session)?;
        let mut warnings = Vec::new();
        create_dir_all(&self.root)?;
        let _lock = FileLock::acquire(self.root.join("sessions.lock"), self.lock_timeout)?;
        let now_ms = unix_ms(clock());
        let map_path = self.root.join(SESSIONS_FILE);
        let mut map = match self.read_sessions() {
            Ok(m) => m,
            Err(StateError::Corrupt { path, source }) => {
                let aside =
                    path.with_extension(format!("json.corrupt-{}", format_compact_ms(now_ms)));
                fs::rename(&path, &aside).map_err(io_at(&path))?;
                warnings.push(format!(
                    "corrupt {} ({source}) moved to {}",
                    path.display(),
                    aside.display()
                ));
                SessionMap::default()
            }
            Err(e) => return Err(e),
        };
        let now_u64 = u64::try_from(now_ms).unwrap_or(0);
        map.sessions
            .retain(|k, e| k == session || now_u64.saturating_sub(e.updated_ms) < PRUNE_AFTER_MS);
        let entry = map.sessions.entry(session.to_owned()).or_default();
        let previous = entry.request.clone();
        let session_dir = self.session_dir(session)?;
        create_dir_all(&session_dir)?;
        let (id, dir) = loop {
            entry.opened += 1;
            let id = format!("{}-{:06}", format_compact_ms(now_ms), entry.opened);
            let dir = session_dir.join(&id);
            match skein_store::private::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_at(&dir)(e)),
            }
        };
        // Todos usually outlive a prompt ("continue"): carry open ones over.
        let todos = previous
            .and_then(|p| self.load_request(session, &p).ok())
            .and_then(|r| r.todos)
            .filter(|t| t.iter().any(|t| t.status != "completed"));
        if let Some(text) = &new.context {
            write_private(&dir.join(CONTEXT_FILE), text.as_bytes())?;
        }
        let record = RequestRecord {
            id: id.clone(),
            session: session.to_owned(),
            prompt: new.prompt,
            prompt_id: new.prompt_id,
            start_uuid: new.start_uuid,
            start_offset: new.start_offset,
            opened_at: format_ms(now_ms),
            implicit: new.implicit,
            todos,
            agents: Vec::new(),
        };
        write_json(&dir.join(REQUEST_FILE), &record)?;
        entry.request = Some(id);
        entry.updated_ms = now_u64;
        write_json(&map_path, &map)?;
        Ok(Opened { record, warnings })
    }

    pub fn load_request(&self, session: &str, request: &str) -> Result<RequestRecord, StateError> {
        let path = self.request_dir(session, request)?.join(REQUEST_FILE);
        read_json(&path)?
            .ok_or_else(|| io_at(&path)(io::Error::new(io::ErrorKind::NotFound, "no request.json")))
    }

    /// Takes the request lock (serialises request.json, the audit trail, context.md).
    pub fn lock_request(&self, session: &str, request: &str) -> Result<FileLock, StateError> {
        let dir = self.request_dir(session, request)?;
        Ok(FileLock::acquire(
            dir.join("request.lock"),
            self.lock_timeout,
        )?)
    }

    /// Read-modify-write of `request.json` under the request lock; `f` returns whether it
    /// changed anything (nothing is written otherwise).
    pub fn update_request(
        &self,
        session: &str,
        request: &str,
        f: impl FnOnce(&mut RequestRecord) -> bool,
    ) -> Result<RequestRecord, StateError> {
        let _lock = self.lock_request(session, request)?;
        self.update_request_locked(session, request, f)
    }

    /// [`StateDir::update_request`] for a caller that already holds the request lock.
    pub fn update_request_locked(
        &self,
        session: &str,
        request: &str,
        f: impl FnOnce(&mut RequestRecord) -> bool,
    ) -> Result<RequestRecord, StateError> {
        let mut record = self.load_request(session, request)?;
        if f(&mut record) {
            let path = self.request_dir(session, request)?.join(REQUEST_FILE);
            write_json(&path, &record)?;
        }
        Ok(record)
    }

    /// Appends one audit line to the request's trail, or to the session's trail when no
    /// request is known. Returns the file written.
    pub fn append_audit(
        &self,
        session: &str,
        request: Option<&str>,
        line: &AuditLine,
    ) -> Result<PathBuf, StateError> {
        let mut text = serde_json::to_string(line).map_err(|source| StateError::Corrupt {
            path: PathBuf::from(AUDIT_FILE),
            source,
        })?;
        text.push('\n');
        let (dir, lock_name) = match request {
            Some(r) => (self.request_dir(session, r)?, "request.lock"),
            None => (self.session_dir(session)?, "session.lock"),
        };
        create_dir_all(&dir)?;
        let _lock = FileLock::acquire(dir.join(lock_name), self.lock_timeout)?;
        let path = dir.join(AUDIT_FILE);
        append_bytes(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Appends `text` to the request's `context.md` (caller holds the request lock).
    pub fn append_context_locked(
        &self,
        session: &str,
        request: &str,
        text: &str,
    ) -> Result<(), StateError> {
        let path = self.request_dir(session, request)?.join(CONTEXT_FILE);
        append_bytes(&path, text.as_bytes())
    }
}

/// Creates `dir` and its parents, new ones with mode 0700.
pub(crate) fn create_dir_all(dir: &Path) -> Result<(), StateError> {
    skein_store::private::create_dir_all(dir).map_err(io_at(dir))
}

/// Appends to `path`, created with mode 0600.
pub(crate) fn append_bytes(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let mut file = skein_store::private::open_append(path).map_err(io_at(path))?;
    file.write_all(bytes).map_err(io_at(path))
}

/// `Ok(None)` when the file does not exist.
pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(
    path: &Path,
) -> Result<Option<T>, StateError> {
    match fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| StateError::Corrupt {
                    path: path.to_owned(),
                    source,
                })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_at(path)(e)),
    }
}

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StateError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StateError::Corrupt {
        path: path.to_owned(),
        source,
    })?;
    bytes.push(b'\n');
    write_private(path, &bytes)
}

/// Replaces `path` atomically (fsync, rename, directory fsync) with a file of mode 0600.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    // `write_atomic`'s temp files are created 0600 and keep that mode through the rename.
    write_atomic(path, bytes).map_err(io_at(path))
}
