//! Hook input: one JSON object on stdin, parsed tolerantly (unknown events and fields are kept),
//! then validated before any of its ids or paths touch the file system.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};
use skein_store::{NameError, safe_component};

/// Largest hook input accepted (a pasted prompt can be big, but not this big).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// The lifecycle event named by `hook_event_name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventKind {
    Stop,
    SubagentStop,
    SessionStart,
    SessionEnd,
    PreCompact,
    PostCompact,
    UserPromptSubmit,
    SubagentStart,
    StopFailure,
    /// Any other event; the name is kept verbatim.
    Other(String),
}

impl EventKind {
    pub fn from_name(name: &str) -> Self {
        match name {
            "Stop" => Self::Stop,
            "SubagentStop" => Self::SubagentStop,
            "SessionStart" => Self::SessionStart,
            "SessionEnd" => Self::SessionEnd,
            "PreCompact" => Self::PreCompact,
            "PostCompact" => Self::PostCompact,
            "UserPromptSubmit" => Self::UserPromptSubmit,
            "SubagentStart" => Self::SubagentStart,
            "StopFailure" => Self::StopFailure,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::PreCompact => "PreCompact",
            Self::PostCompact => "PostCompact",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::SubagentStart => "SubagentStart",
            Self::StopFailure => "StopFailure",
            Self::Other(name) => name,
        }
    }
}

/// One hook input object. Known fields are lifted out when they have the expected JSON type;
/// everything else (including known fields of an unexpected type) stays in `extra`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookEvent {
    pub hook_event_name: String,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub permission_mode: Option<String>,
    pub prompt_id: Option<String>,
    /// Stop/SubagentStop: this turn is already a continuation forced by a Stop hook.
    pub stop_hook_active: bool,
    pub last_assistant_message: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub agent_transcript_path: Option<String>,
    /// SessionStart: `startup` / `resume` / `clear` / `compact` / `fork`.
    pub source: Option<String>,
    /// SessionEnd reason.
    pub reason: Option<String>,
    /// PreCompact/PostCompact: `manual` / `auto`.
    pub trigger: Option<String>,
    pub custom_instructions: Option<String>,
    /// UserPromptSubmit: the prompt text.
    pub prompt: Option<String>,
    /// Tool events (PreToolUse, PostToolUse, …): the tool and its call id; `tool_input` stays
    /// in `extra`.
    pub tool_name: Option<String>,
    pub tool_use_id: Option<String>,
    pub extra: Map<String, Value>,
}

/// Why an event was refused.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("hook input is larger than {max} bytes")]
    TooLarge { max: usize },
    #[error("hook input is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("hook input is not a JSON object")]
    NotObject,
    #[error("hook input has no session_id")]
    MissingSession,
    #[error("refused {field}: {source}")]
    BadId {
        field: &'static str,
        #[source]
        source: NameError,
    },
    #[error("refused {field} {path:?}: {why}")]
    BadPath {
        field: &'static str,
        path: String,
        why: String,
    },
}

/// The parts of an event that passed validation, ready to be used as path components/paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidEvent {
    pub kind: EventKind,
    pub session: String,
    pub agent_id: Option<String>,
    /// Main transcript, lexically normalised, inside a projects directory.
    pub transcript: Option<PathBuf>,
    /// SubagentStop: the subagent's transcript, same rules.
    pub agent_transcript: Option<PathBuf>,
}

impl HookEvent {
    /// Parses hook input bytes. Tolerates a BOM, surrounding whitespace, lone UTF-16 surrogate
    /// escapes and invalid UTF-8 (both become U+FFFD, through the transcripts' tolerant
    /// parser, `skein_core::repair`), unknown fields and unknown event names.
    pub fn parse(bytes: &[u8]) -> Result<Self, EventError> {
        if bytes.len() > MAX_EVENT_BYTES {
            return Err(EventError::TooLarge {
                max: MAX_EVENT_BYTES,
            });
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(first) => match skein_core::repair::repair_line(bytes) {
                std::borrow::Cow::Owned(fixed) => {
                    serde_json::from_slice(&fixed).map_err(EventError::Json)?
                }
                std::borrow::Cow::Borrowed(_) => return Err(EventError::Json(first)),
            },
        };
        let Value::Object(mut map) = value else {
            return Err(EventError::NotObject);
        };
        let mut s = |key: &str| take_string(&mut map, key);
        let mut event = Self {
            hook_event_name: s("hook_event_name").unwrap_or_default(),
            session_id: s("session_id"),
            transcript_path: s("transcript_path"),
            cwd: s("cwd"),
            permission_mode: s("permission_mode"),
            prompt_id: s("prompt_id"),
            last_assistant_message: s("last_assistant_message"),
            agent_id: s("agent_id"),
            agent_type: s("agent_type"),
            agent_transcript_path: s("agent_transcript_path"),
            source: s("source"),
            reason: s("reason"),
            trigger: s("trigger"),
            custom_instructions: s("custom_instructions"),
            prompt: s("prompt"),
            tool_name: s("tool_name"),
            tool_use_id: s("tool_use_id"),
            ..Self::default()
        };
        event.stop_hook_active = match map.get("stop_hook_active") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        };
        map.remove("stop_hook_active");
        event.extra = map;
        Ok(event)
    }

    /// Tool events: the tool's input.
    pub fn tool_input(&self) -> Option<&Value> {
        self.extra.get("tool_input")
    }

    pub fn kind(&self) -> EventKind {
        EventKind::from_name(&self.hook_event_name)
    }

    /// SessionStart after a compaction.
    pub fn is_compact_start(&self) -> bool {
        self.kind() == EventKind::SessionStart && self.source.as_deref() == Some("compact")
    }

    /// Checks the session id, agent id and transcript paths. Any bad field refuses the event.
    pub fn validate(&self, projects_dirs: &[PathBuf]) -> Result<ValidEvent, EventError> {
        let session = self
            .session_id
            .as_deref()
            .ok_or(EventError::MissingSession)?;
        let session = safe_component(session)
            .map_err(|source| EventError::BadId {
                field: "session_id",
                source,
            })?
            .to_owned();
        let agent_id = match self.agent_id.as_deref() {
            Some(id) => Some(
                safe_component(id)
                    .map_err(|source| EventError::BadId {
                        field: "agent_id",
                        source,
                    })?
                    .to_owned(),
            ),
            None => None,
        };
        let path = |field: &'static str, raw: Option<&str>| {
            raw.map(|p| validate_transcript_path(field, p, projects_dirs))
                .transpose()
        };
        Ok(ValidEvent {
            kind: self.kind(),
            session,
            agent_id,
            transcript: path("transcript_path", self.transcript_path.as_deref())?,
            agent_transcript: path(
                "agent_transcript_path",
                self.agent_transcript_path.as_deref(),
            )?,
        })
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    if matches!(map.get(key), Some(Value::String(_))) {
        match map.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        }
    } else {
        None
    }
}

/// Accepts `raw` only if it is an absolute path that, after lexical normalisation and after
/// resolving the symlinks of its existing part, lies strictly inside one of `projects_dirs`.
/// Returns the lexically normalised path.
pub fn validate_transcript_path(
    field: &'static str,
    raw: &str,
    projects_dirs: &[PathBuf],
) -> Result<PathBuf, EventError> {
    let refuse = |why: &str| EventError::BadPath {
        field,
        path: raw.chars().take(300).collect(),
        why: why.to_owned(),
    };
    if raw.contains('\0') {
        return Err(refuse("contains a NUL byte"));
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(refuse("not an absolute path"));
    }
    let norm = normalize_lexically(path).ok_or_else(|| refuse("'..' escapes the root"))?;
    for dir in projects_dirs {
        let Some(dir) = normalize_lexically(dir).filter(|d| d.is_absolute()) else {
            continue;
        };
        if norm == dir || !norm.starts_with(&dir) {
            continue;
        }
        return if symlinks_stay_inside(&norm, &dir) {
            Ok(norm)
        } else {
            Err(refuse("a symlink leads outside the projects directory"))
        };
    }
    Err(refuse("outside the Claude projects directory"))
}

/// Resolves `.` and `..` without touching the file system; `None` if `..` climbs above the root.
pub fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for comp in path.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => out.push(comp.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(c) => {
                out.push(c);
                depth += 1;
            }
        }
    }
    Some(out)
}

/// The deepest existing ancestor of `path` (or `path` itself), when it is below `dir`, must
/// still be below `dir` once both are canonicalised.
fn symlinks_stay_inside(path: &Path, dir: &Path) -> bool {
    let Some(existing) = path.ancestors().find(|a| a.symlink_metadata().is_ok()) else {
        return true;
    };
    if !existing.starts_with(dir) || existing == dir {
        return true; // nothing below the projects dir exists yet
    }
    match (existing.canonicalize(), dir.canonicalize()) {
        (Ok(real), Ok(real_dir)) => real.starts_with(&real_dir) && real != real_dir,
        _ => false, // a dangling symlink, a loop, or an unreadable directory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_replaced_but_pairs_and_escaped_backslashes_kept() {
        let raw = br#"{"prompt":"a\ud83d b \ud83d\ude00 c \\ud83d"}"#;
        let e = HookEvent::parse(raw).expect("parse");
        assert_eq!(e.prompt.as_deref(), Some("a\u{fffd} b \u{1f600} c \\ud83d"));
        let e = HookEvent::parse(br#"{"hook_event_name":"Stop","prompt":"x\ud800"}"#)
            .expect("a lone surrogate at the end of a string");
        assert_eq!(e.prompt.as_deref(), Some("x\u{fffd}"));
        assert_eq!(e.hook_event_name, "Stop");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let e = HookEvent::parse(b"{\"hook_event_name\":\"Stop\",\"prompt\":\"a\xff b\"}")
            .expect("parse");
        assert_eq!(e.prompt.as_deref(), Some("a\u{fffd} b"));
    }

    #[test]
    fn lexical_normalisation() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            Some(PathBuf::from("/a/c"))
        );
        assert_eq!(normalize_lexically(Path::new("/a/../../etc")), None);
    }
}
