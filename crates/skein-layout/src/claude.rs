//! Claude Code's projects tree (format.md §1, §10): what a transcript path is and where a
//! transcript of a given identity lives.
//!
//! ```text
//! <projects>/<project>/<session-id>.jsonl                                   main transcript
//! <projects>/<project>/<session-id>/subagents/agent-<id>.jsonl              subagent (≥ 2.1.2)
//! <projects>/<project>/<session-id>/subagents/agent-<id>.meta.json          its sidecar
//! <projects>/<project>/<session-id>/subagents/workflows/<run>/agent-*.jsonl Workflow agents
//! <projects>/<project>/<session-id>/subagents/workflows/<run>/journal.jsonl bookkeeping
//! <projects>/<project>/agent-<id>.jsonl                                     legacy sibling agent
//! ```
//!
//! `<project>` is the session's working directory with every non-alphanumeric character
//! replaced by `-`; `.jsonl.zst` is accepted wherever `.jsonl` is.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skein_store::is_transcript_name;

/// Prefix of subagent transcript names.
pub const AGENT_PREFIX: &str = "agent-";
/// The directory of a session's subagent transcripts.
pub const SUBAGENTS_DIR: &str = "subagents";
/// Bytes read from a transcript's start to find its first timestamp.
const HEAD_BYTES: u64 = 64 * 1024;
/// Largest `agent-<id>.meta.json` sidecar read.
const SIDECAR_BYTES: u64 = 64 * 1024;
/// Longest project directory name Claude Code derives from a cwd before hashing it.
const MAX_PROJECT_NAME: usize = 200;

/// Prefixes of internal helper agents (compaction, prompt suggestions, `/btw`): they replay the
/// parent's context, so their tokens are not counted again.
const INTERNAL_AGENT_PREFIXES: [&str; 3] = ["acompact-", "aprompt_suggestion-", "aside_question-"];

/// True for the ids of internal helper agents.
pub fn is_internal_agent(agent_id: &str) -> bool {
    INTERNAL_AGENT_PREFIXES
        .iter()
        .any(|p| agent_id.starts_with(p))
}

/// A transcript file name without its `.jsonl.zst` or `.jsonl` extension.
pub fn transcript_stem(name: &str) -> Option<&str> {
    name.strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))
}

fn file_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// The agent id of an `agent-<id>.jsonl[.zst]` path.
pub fn agent_id_of(path: &Path) -> Option<&str> {
    transcript_stem(file_name(path)?)?.strip_prefix(AGENT_PREFIX)
}

/// `journal.jsonl` of a Workflow run: bookkeeping, not a transcript.
pub fn is_workflow_journal(path: &Path) -> bool {
    file_name(path) == Some("journal.jsonl")
        && path.components().any(|c| c.as_os_str() == "workflows")
}

/// The session directory of a file under `<session>/subagents/…` (the parent of the nearest
/// `subagents` ancestor).
pub fn subagent_session_dir(path: &Path) -> Option<&Path> {
    path.ancestors()
        .skip(1)
        .find(|d| d.file_name().is_some_and(|n| n == SUBAGENTS_DIR))?
        .parent()
}

/// What a path is in a Claude projects tree, from its name and place alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveFile<'a> {
    /// `<project>/<session-id>.jsonl`.
    Main { session_id: &'a str },
    /// `<session-id>/subagents/[workflows/<run>/]agent-<id>.jsonl`: `session_dir` is
    /// `<project>/<session-id>`.
    Subagent {
        agent_id: &'a str,
        session_dir: &'a Path,
    },
    /// `<project>/agent-<id>.jsonl` (≈2.0.x–2.1.1): its session is the `sessionId` inside.
    Legacy { agent_id: &'a str },
}

impl<'a> LiveFile<'a> {
    /// Classifies a transcript path; `None` for anything that is not one (other names,
    /// Workflow journals).
    pub fn of(path: &'a Path) -> Option<Self> {
        if is_workflow_journal(path) {
            return None;
        }
        let stem = transcript_stem(file_name(path)?)?;
        let Some(agent_id) = stem.strip_prefix(AGENT_PREFIX) else {
            return Some(Self::Main { session_id: stem });
        };
        Some(match subagent_session_dir(path) {
            Some(session_dir) => Self::Subagent {
                agent_id,
                session_dir,
            },
            None => Self::Legacy { agent_id },
        })
    }

    /// The project directory holding the file.
    pub fn project_dir(&self, path: &'a Path) -> &'a Path {
        let dir = match self {
            Self::Subagent { session_dir, .. } => session_dir.parent(),
            Self::Main { .. } | Self::Legacy { .. } => path.parent(),
        };
        dir.unwrap_or(Path::new(""))
    }
}

/// The project directory name of a transcript path (the directory above `<session>/subagents/`
/// for a subagent); `None` when the path does not name one (a bare relative file name).
pub fn project_of(path: &Path) -> Option<String> {
    let live = LiveFile::of(path)?;
    live.project_dir(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// The project directory name Claude Code derives from a working directory (every
/// non-alphanumeric character becomes `-`); `None` past the length where Claude Code appends a
/// hash instead (that hash cannot be recomputed reliably, format.md §1).
pub fn project_name_for_cwd(cwd: &str) -> Option<String> {
    let name: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    (!name.is_empty() && name.len() <= MAX_PROJECT_NAME).then_some(name)
}

/// A transcript's path inside its project directory, `/`-separated: `<sid>.jsonl`,
/// `<sid>/subagents/agent-<id>.jsonl`, `agent-<id>.jsonl` (legacy). `None` for paths that are
/// not transcripts of a projects tree.
pub fn path_in_project(path: &Path) -> Option<String> {
    let live = LiveFile::of(path)?;
    let rel = path.strip_prefix(live.project_dir(path)).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Where a main transcript lives in its project directory.
pub fn main_path(session_id: &str) -> String {
    format!("{session_id}.jsonl")
}

/// A session's subagent directory inside its project directory (`<sid>/subagents`).
pub fn subagents_dir(session_id: &str) -> PathBuf {
    Path::new(session_id).join(SUBAGENTS_DIR)
}

/// Where a subagent transcript lives in its project directory: under its session's
/// `subagents/`, or beside the sessions when it has no session (legacy).
pub fn agent_path(session_id: Option<&str>, agent_id: &str) -> String {
    match session_id {
        Some(sid) => format!("{sid}/{SUBAGENTS_DIR}/{AGENT_PREFIX}{agent_id}.jsonl"),
        None => format!("{AGENT_PREFIX}{agent_id}.jsonl"),
    }
}

/// Where an agent transcript goes below a session's `subagents/` directory: its place below the
/// nearest `subagents` (so Workflow runs keep their directory), else `agent-<id>.jsonl`; never
/// with `.zst`.
pub fn path_in_subagents(agent_transcript: &Path, agent_id: &str) -> PathBuf {
    let rel = agent_transcript
        .components()
        .skip_while(|c| c.as_os_str() != SUBAGENTS_DIR)
        .skip(1)
        .collect::<PathBuf>();
    let rel = if rel.as_os_str().is_empty() {
        PathBuf::from(format!(
            "{AGENT_PREFIX}{}.jsonl",
            skein_store::sanitize_file_name(agent_id)
        ))
    } else {
        rel
    };
    let name = rel.to_string_lossy();
    match name.strip_suffix(".zst") {
        Some(plain) => PathBuf::from(plain),
        None => rel,
    }
}

/// The `agent-<id>.meta.json` sidecar of an agent transcript.
pub fn sidecar_path(agent_transcript: &Path) -> Option<PathBuf> {
    let stem = transcript_stem(file_name(agent_transcript)?)?;
    Some(agent_transcript.with_file_name(format!("{stem}.meta.json")))
}

/// The `agent-<id>.meta.json` sidecar of a subagent file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentMeta {
    pub agent_type: Option<String>,
    pub description: Option<String>,
    /// The `tool_use` id of the spawning call.
    pub tool_use_id: Option<String>,
    pub parent_agent_id: Option<String>,
    pub spawn_depth: Option<u64>,
    /// The agent's git worktree (spawned with `isolation: "worktree"`).
    pub worktree_path: Option<String>,
}

impl AgentMeta {
    /// Parses a sidecar's text; anything unparseable counts as absent.
    pub fn parse(text: &[u8]) -> Option<Self> {
        serde_json::from_slice(text).ok()
    }
}

/// Reads the sidecar of an agent transcript as Claude Code wrote it (at most 64 KiB); `None`
/// when there is none or it cannot be read.
pub fn read_sidecar(agent_transcript: &Path) -> Option<Vec<u8>> {
    let file = File::open(sidecar_path(agent_transcript)?).ok()?;
    let mut bytes = Vec::new();
    file.take(SIDECAR_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The first `"timestamp":"…"` value in the first 64 KiB of a transcript, if it parses (it
/// names the archive file; the archive falls back to the file's mtime without it).
pub fn first_timestamp(path: &Path) -> Option<String> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let file = File::open(path).ok()?;
    let mut head = Vec::new();
    file.take(HEAD_BYTES).read_to_end(&mut head).ok()?;
    let at = memchr::memmem::find(&head, KEY)? + KEY.len();
    let len = head[at..].iter().take(64).position(|&b| b == b'"')?;
    let ts = std::str::from_utf8(&head[at..at + len]).ok()?;
    skein_core::time::parse_ms(ts).map(|_| ts.to_owned())
}

/// The legacy `agent-*.jsonl[.zst]` transcripts directly in `dir`, sorted (none when it cannot
/// be listed).
pub fn legacy_agent_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut legacy: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            file_name(p).is_some_and(|n| n.starts_with(AGENT_PREFIX)) && is_transcript_name(p)
        })
        .collect();
    legacy.sort();
    legacy
}

/// The `sessionId` of the first of the first 64 records that has one (links a legacy agent
/// file to its session).
pub fn session_id_inside(path: &Path) -> Option<String> {
    use skein_core::{Event, Parser, ReadLines, Reader, ReaderOptions};
    thread_local! {
        // Hundreds of these files are opened while listing an old tree: one parser and one
        // block per thread, not a new one for each (a new reader zeroes its first block).
        static SCRATCH: std::cell::RefCell<(Parser, Vec<u8>)> = std::cell::RefCell::default();
    }
    let skein_store::Input::Stream(r) = crate::open(path, skein_store::InputMode::Read).ok()?
    else {
        return None;
    };
    SCRATCH.with_borrow_mut(|(parser, buf)| {
        // Small blocks: the first record is all that is read.
        let lines = ReadLines::with_buffer(r, 8 << 10, std::mem::take(buf));
        // Only the session id is read: not the texts (a first prompt can be long), nor the
        // details.
        parser.set_texts(false);
        parser.set_details(false);
        let mut reader =
            Reader::with_parser(lines, ReaderOptions::default(), std::mem::take(parser));
        let mut found = None;
        for _ in 0..64 {
            match reader.next_event() {
                Ok(Some(Event::Record(_, p))) => {
                    if let Some(s) = p.envelope.session_id.get() {
                        found = Some(s.to_owned());
                        break;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        let (lines, p) = reader.into_parts();
        (*parser, *buf) = (p, lines.into_buffer());
        // A first record of megabytes is not kept in memory for the rest of the process.
        if buf.capacity() > 1 << 20 {
            *buf = Vec::new();
        }
        found
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_claude_tree() {
        let p = Path::new("/p/-home-me/0b4c.jsonl");
        assert_eq!(LiveFile::of(p), Some(LiveFile::Main { session_id: "0b4c" }));
        assert_eq!(project_of(p).as_deref(), Some("-home-me"));
        assert_eq!(path_in_project(p).as_deref(), Some("0b4c.jsonl"));

        let a = Path::new("/p/-home-me/0b4c/subagents/workflows/r1/agent-w1.jsonl.zst");
        assert_eq!(
            LiveFile::of(a),
            Some(LiveFile::Subagent {
                agent_id: "w1",
                session_dir: Path::new("/p/-home-me/0b4c")
            })
        );
        assert_eq!(project_of(a).as_deref(), Some("-home-me"));
        assert_eq!(
            path_in_project(a).as_deref(),
            Some("0b4c/subagents/workflows/r1/agent-w1.jsonl.zst")
        );

        let l = Path::new("/p/-home-me/agent-old.jsonl");
        assert_eq!(LiveFile::of(l), Some(LiveFile::Legacy { agent_id: "old" }));
        assert_eq!(project_of(l).as_deref(), Some("-home-me"));

        for other in [
            "/p/x/0b4c/subagents/workflows/r1/journal.jsonl",
            "/p/x/notes.txt",
            "/p/x/agent-a.meta.json",
        ] {
            assert_eq!(LiveFile::of(Path::new(other)), None, "{other}");
        }
        assert_eq!(agent_path(Some("s"), "a"), "s/subagents/agent-a.jsonl");
        assert_eq!(
            path_in_subagents(a, "w1"),
            Path::new("workflows/r1/agent-w1.jsonl")
        );
        assert_eq!(path_in_subagents(l, "old"), Path::new("agent-old.jsonl"));
        assert_eq!(agent_path(None, "a"), "agent-a.jsonl");
        assert_eq!(
            sidecar_path(a),
            Some(PathBuf::from(
                "/p/-home-me/0b4c/subagents/workflows/r1/agent-w1.meta.json"
            ))
        );
        assert!(is_internal_agent("acompact-1") && !is_internal_agent("a1"));
        assert_eq!(
            project_name_for_cwd("/Users/me/my_proj").as_deref(),
            Some("-Users-me-my-proj")
        );
        assert_eq!(project_name_for_cwd(&"x".repeat(201)), None);
    }

    #[test]
    fn first_timestamp_and_sidecar() {
        let d = tempfile::tempdir().expect("tempdir");
        let t = d.path().join("agent-a1.jsonl");
        std::fs::write(
            &t,
            "{\"type\":\"summary\"}\n{\"timestamp\":\"nope\"}\n{\"timestamp\":\"2026-01-05T14:03:22.123Z\"}\n",
        )
        .expect("write");
        // The first occurrence must parse; a later one is not looked for.
        assert_eq!(first_timestamp(&t), None);
        std::fs::write(&t, "{\"timestamp\":\"2026-01-05T14:03:22.123Z\"}\n").expect("write");
        assert_eq!(
            first_timestamp(&t).as_deref(),
            Some("2026-01-05T14:03:22.123Z")
        );
        assert_eq!(read_sidecar(&t), None);
        std::fs::write(
            d.path().join("agent-a1.meta.json"),
            r#"{"agentType":"Explore","toolUseId":"toolu_1"}"#,
        )
        .expect("write");
        let meta = AgentMeta::parse(&read_sidecar(&t).expect("sidecar")).expect("parses");
        assert_eq!(meta.agent_type.as_deref(), Some("Explore"));
        assert_eq!(meta.tool_use_id.as_deref(), Some("toolu_1"));
    }

    #[test]
    fn the_session_id_inside_a_long_first_record() {
        let d = tempfile::tempdir().expect("tempdir");
        let t = d.path().join("agent-a1.jsonl");
        // Longer than the blocks it is read in, the id at its end; a record without one first.
        let prompt = "x".repeat(100_000);
        let body = format!(
            "{{\"type\":\"summary\"}}\n{{\"message\":{{\"content\":\"{prompt}\"}},\"sessionId\":\"s-long\"}}\n"
        );
        std::fs::write(&t, body).expect("write");
        assert_eq!(session_id_inside(&t).as_deref(), Some("s-long"));
        std::fs::write(&t, "{\"type\":\"summary\"}\n").expect("write");
        assert_eq!(session_id_inside(&t), None);
    }
}
