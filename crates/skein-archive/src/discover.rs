//! What a transcript path is, for callers that archive files by path (`skein archive PATH…`):
//! the [`Kind`] from the Claude Code layout (format.md §1) plus the `agent-<id>.meta.json`
//! sidecar, and the first timestamp that names the archive file.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{IoContext, Result};
use crate::layout::{Kind, UNKNOWN_AGENT_TYPE};
use skein_core::time::parse_ms;

/// A transcript path classified for [`crate::Archive::ingest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub kind: Kind,
    /// The first record timestamp found in the first MiB, if any.
    pub first_timestamp: Option<String>,
}

/// Classifies a transcript by its place in a Claude projects tree:
///
/// * `<project>/<session-id>.jsonl` → main session;
/// * `<project>/<session-id>/subagents/[workflows/<run>/]agent-<id>.jsonl` → subagent of that
///   session, with `agentType` / `toolUseId` from `agent-<id>.meta.json` when present;
/// * `<project>/agent-<id>.jsonl` (legacy flat layout) → subagent without a known parent.
///
/// Returns `None` for other files (`journal.jsonl`, non-transcripts). Ids are not validated
/// here; `ingest` refuses unsafe ones.
pub fn discover(path: &Path) -> Result<Option<Discovered>> {
    let Some(kind) = classify(path)? else {
        return Ok(None);
    };
    Ok(Some(Discovered {
        kind,
        first_timestamp: first_timestamp(path)?,
    }))
}

fn classify(path: &Path) -> Result<Option<Kind>> {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    };
    let Some(file) = name(Some(path)) else {
        return Ok(None);
    };
    let Some(stem) = file.strip_suffix(".jsonl") else {
        return Ok(None);
    };
    let Some(agent_id) = stem.strip_prefix("agent-") else {
        if stem == "journal" || stem == "history" {
            return Ok(None);
        }
        return Ok(Some(Kind::MainSession {
            session_id: stem.to_owned(),
        }));
    };
    // The session directory is the parent of the nearest `subagents` ancestor.
    let parent_session = path
        .ancestors()
        .find(|p| name(Some(p)).as_deref() == Some("subagents"))
        .and_then(|sub| name(sub.parent()));
    let sidecar = path.with_file_name(format!("agent-{agent_id}.meta.json"));
    let side: serde_json::Value = match crate::layout::read_optional(&sidecar)? {
        Some(bytes) => serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        None => serde_json::Value::Null,
    };
    let text = |k: &str| side.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    Ok(Some(Kind::Subagent {
        agent_type: text("agentType").unwrap_or_else(|| UNKNOWN_AGENT_TYPE.to_owned()),
        agent_id: agent_id.to_owned(),
        parent_session,
        tool_use_id: text("toolUseId"),
    }))
}

/// The first `"timestamp":"…"` value (that parses) among the complete lines of the first MiB.
pub fn first_timestamp(path: &Path) -> Result<Option<String>> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let mut head = Vec::new();
    File::open(path)
        .ctx(path)?
        .take(1 << 20)
        .read_to_end(&mut head)
        .ctx(path)?;
    let complete = memchr::memrchr(b'\n', &head).map_or(0, |i| i + 1);
    for line in head[..complete].split(|&b| b == b'\n') {
        let Some(at) = memchr::memmem::find(line, KEY) else {
            continue;
        };
        let rest = &line[at + KEY.len()..];
        let Some(end) = memchr::memchr(b'"', rest) else {
            continue;
        };
        if let Ok(ts) = std::str::from_utf8(&rest[..end])
            && parse_ms(ts).is_some()
        {
            return Ok(Some(ts.to_owned()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_claude_layout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proj = dir.path().join("-home-me-proj");
        let sid = "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b";
        let subs = proj.join(sid).join("subagents");
        std::fs::create_dir_all(subs.join("workflows/run1")).expect("mkdir");
        let main = proj.join(format!("{sid}.jsonl"));
        std::fs::write(
            &main,
            "{\"type\":\"summary\"}\n{\"type\":\"user\",\"timestamp\":\"2026-01-05T14:03:22.123Z\"}\n",
        )
        .expect("write");
        let agent = subs.join("agent-a1b2c3d.jsonl");
        std::fs::write(&agent, "{}\n").expect("write");
        std::fs::write(
            subs.join("agent-a1b2c3d.meta.json"),
            "{\"agentType\":\"Explore\",\"toolUseId\":\"toolu_X\",\"spawnDepth\":1}",
        )
        .expect("write");
        let d = discover(&main).expect("ok").expect("main");
        assert_eq!(
            d,
            Discovered {
                kind: Kind::MainSession {
                    session_id: sid.into()
                },
                first_timestamp: Some("2026-01-05T14:03:22.123Z".into()),
            }
        );
        let d = discover(&agent).expect("ok").expect("agent");
        assert_eq!(
            d.kind,
            Kind::Subagent {
                agent_type: "Explore".into(),
                agent_id: "a1b2c3d".into(),
                parent_session: Some(sid.into()),
                tool_use_id: Some("toolu_X".into()),
            }
        );
        let wf = subs.join("workflows/run1/agent-w1.jsonl");
        std::fs::write(&wf, "{}\n").expect("write");
        let Kind::Subagent {
            agent_type,
            parent_session,
            ..
        } = discover(&wf).expect("ok").expect("wf").kind
        else {
            panic!("subagent expected")
        };
        assert_eq!(
            (agent_type.as_str(), parent_session.as_deref()),
            ("unknown", Some(sid))
        );
        let legacy = proj.join("agent-old1.jsonl");
        std::fs::write(&legacy, "{}\n").expect("write");
        assert!(matches!(
            discover(&legacy).expect("ok").expect("legacy").kind,
            Kind::Subagent {
                parent_session: None,
                ..
            }
        ));
        let journal = subs.join("workflows/run1/journal.jsonl");
        std::fs::write(&journal, "{}\n").expect("write");
        assert!(discover(&journal).expect("ok").is_none());
        assert!(discover(&proj.join("notes.txt")).expect("ok").is_none());
    }
}
