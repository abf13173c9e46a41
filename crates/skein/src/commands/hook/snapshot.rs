//! The `snapshot` pass (Stop): the current request's part of the session, cut by
//! `skein-passes`' snapshot (from the request's prompt to the end of the active branch), written
//! to the request directory as
//!
//! * `snapshot.jsonl`: the self-contained request transcript (redacted when `redact = true`);
//! * `session-log.md`: the same as a readable log (prompts, answers, one line per tool call).
//!
//! Only the request's bytes are read: from the transcript size recorded when the request
//! opened (`start_offset`) to the end of the last complete line, at most `max_bytes` (the
//! newest ones). Both files are derived and rewritten on every Stop, so they are replaced
//! atomically (rename) without fsync: after a crash the next Stop writes them again.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::Value;
use skein_hook::{ChangeKind, PassInput, PassReport, RequestRecord};
use skein_passes::{Error as SnapshotError, SnapshotOptions, SnapshotReport, Start};
use skein_redact::RedactOptions;
use skein_store::Durability;

use super::runner::{Passes, pass_options, redact_line};

/// The request transcript written next to `session-log.md`.
pub(crate) const SNAPSHOT_JSONL: &str = "snapshot.jsonl";
/// Default cap on the request bytes read per Stop.
const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// How far before an implicit request's opening offset its prompt is looked for.
const IMPLICIT_LOOK_BACK: u64 = 4 << 20;
/// Longest tool-call summary in the Markdown log.
const TOOL_SUMMARY_CHARS: usize = 160;

/// `[pass.snapshot]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct SnapshotPassOptions {
    /// Most request bytes read per run (the newest ones); default 64 MiB.
    max_bytes: Option<u64>,
    /// Redaction rules (used when `redact = true`).
    redact: RedactOptions,
}

pub(super) fn run(passes: &mut Passes, input: &PassInput<'_>) -> Result<PassReport> {
    let (Some(request), Some(dir)) = (input.request, input.request_dir) else {
        return Ok(summary("no request to snapshot"));
    };
    let Some(transcript) = input.transcript else {
        return Ok(summary("no transcript in the event"));
    };
    let log_path = input
        .snapshot_path()
        .unwrap_or_else(|| dir.join(skein_hook::state::SNAPSHOT_FILE));
    match input.change {
        None => return Ok(summary("transcript does not exist (yet)")),
        Some(ChangeKind::Unchanged) if log_path.is_file() => return Ok(PassReport::default()),
        Some(_) => {}
    }
    let opts: SnapshotPassOptions = pass_options(input)?;
    let max = opts.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).max(1);
    let (start, truncated) = region_start(request, input.end, max);
    let bytes = read_region(transcript, start, input.end)
        .with_context(|| format!("reading {}", transcript.display()))?;
    let Some((out, report)) = cut(&bytes, request)? else {
        return Ok(summary("no prompt on the active branch yet"));
    };
    let out = if input.config.redact {
        let redactor = passes.redactor(&opts.redact)?;
        let mut red = Vec::with_capacity(out.len());
        for line in out.split_inclusive(|&b| b == b'\n') {
            redact_line(redactor, line, &mut red);
        }
        red
    } else {
        out
    };
    let md = render_markdown(request, &report, truncated, &out);
    replace(&dir.join(SNAPSHOT_JSONL), &out)?;
    replace(&log_path, md.as_bytes())?;
    Ok(summary(&format!(
        "{} record(s) from {} ({} bytes read{})",
        report.records,
        report.start.uuid,
        bytes.len(),
        if truncated { ", truncated" } else { "" }
    )))
}

fn summary(s: &str) -> PassReport {
    PassReport {
        summary: Some(s.to_owned()),
    }
}

/// Where the request's bytes start, and whether the `max` cap cut them.
fn region_start(request: &RequestRecord, end: u64, max: u64) -> (u64, bool) {
    let floor = end.saturating_sub(max);
    let start = match request.start_offset {
        // Opened at a Stop (skein installed mid-session): the prompt came before; look back.
        Some(at) if request.implicit && at <= end => at.saturating_sub(IMPLICIT_LOOK_BACK),
        Some(at) if at <= end => at,
        // The transcript shrank since (rewritten): its end is all that can be trusted.
        Some(_) => return (floor, floor > 0),
        // The transcript did not exist when the request opened: all of it is the request's.
        None => 0,
    };
    (start.max(floor), start < floor)
}

/// `[start, end)` of the file, from the first line that starts at or after `start`.
fn read_region(path: &Path, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let from = start.saturating_sub(1);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(usize::try_from(end - from).unwrap_or(0));
    file.take(end.saturating_sub(from)).read_to_end(&mut buf)?;
    if start == 0 {
        return Ok(buf);
    }
    // buf[0] is the byte before `start`: drop everything up to the first newline from there.
    let cut = memchr::memchr(b'\n', &buf).map_or(buf.len(), |i| i + 1);
    buf.drain(..cut);
    Ok(buf)
}

/// Runs the snapshot from the request's prompt record (or the last prompt when it is not known
/// or not on the active branch). `None` when the bytes hold no prompt or no branch yet.
fn cut(bytes: &[u8], request: &RequestRecord) -> Result<Option<(Vec<u8>, SnapshotReport)>> {
    let mut starts = Vec::new();
    if let Some(u) = &request.start_uuid {
        starts.push(Start::Uuid(u.clone()));
    }
    starts.push(Start::LastPrompt);
    for start in starts {
        match skein_passes::snapshot(bytes, &SnapshotOptions { start }) {
            Ok(r) => return Ok(Some(r)),
            Err(SnapshotError::StartNotOnBranch(_)) => {}
            Err(SnapshotError::NoPrompt | SnapshotError::NoActiveBranch) => return Ok(None),
            Err(e) => return Err(e).context("snapshot"),
        }
    }
    Ok(None)
}

/// Replaces `path` by rename, without fsync (derived data, see the module docs).
fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    skein_store::write_atomic_with(path, bytes, Durability::RenameOnly)
        .with_context(|| format!("replacing {}", path.display()))
}

/// The request as Markdown: prompts and answers in full, tool calls as one line each.
fn render_markdown(
    request: &RequestRecord,
    report: &SnapshotReport,
    truncated: bool,
    jsonl: &[u8],
) -> String {
    let mut md = format!("# Request {}\n\n", request.id);
    let _ = writeln!(md, "- session: `{}`", request.session);
    if let Some(p) = &request.prompt_id {
        let _ = writeln!(md, "- prompt id: `{p}`");
    }
    let _ = writeln!(md, "- opened: {}", request.opened_at);
    let _ = writeln!(
        md,
        "- records: {} (from `{}` to `{}`)",
        report.records, report.start.uuid, report.leaf
    );
    if !report.agent_ids.is_empty() {
        let _ = writeln!(md, "- subagents: {}", report.agent_ids.join(", "));
    }
    if truncated {
        md.push_str("- note: only the newest part of the request was read\n");
    }
    if let Some(todos) = request.todos.as_ref().filter(|t| !t.is_empty()) {
        md.push_str("\n## Todos\n\n");
        for t in todos {
            let mark = if t.status == "completed" { "x" } else { " " };
            let _ = writeln!(md, "- [{mark}] {}", one_line(&t.content, 200));
        }
    }
    let mut last_header = String::new();
    for line in jsonl.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v["isSidechain"] == true || v["isMeta"] == true {
            continue;
        }
        let Some(role @ ("user" | "assistant")) = v["type"].as_str() else {
            continue;
        };
        let time = v["timestamp"].as_str().and_then(|t| t.get(11..19));
        let content = &v["message"]["content"];
        let blocks: Vec<&Value> = match content {
            Value::Array(b) => b.iter().collect(),
            Value::String(_) => vec![content],
            _ => continue,
        };
        let mut body = String::new();
        for b in blocks {
            match (b, b["type"].as_str()) {
                (Value::String(s), _) => push_text(&mut body, s),
                (_, Some("text")) => push_text(&mut body, b["text"].as_str().unwrap_or("")),
                (_, Some("tool_use")) => {
                    let name = b["name"].as_str().unwrap_or("tool");
                    let what = tool_summary(&b["input"]);
                    let _ = writeln!(body, "- `{}` {}", one_line(name, 60), what);
                }
                (_, Some("tool_result")) if b["is_error"] == true => {
                    body.push_str("- (tool error)\n");
                }
                _ => {}
            }
        }
        if body.trim().is_empty() {
            continue;
        }
        // Claude Code writes one line per content block; keep one heading per message.
        let key = match v["message"]["id"].as_str() {
            Some(id) => format!("{role}:{id}"),
            None => format!("{role}:{}", v["uuid"].as_str().unwrap_or("")),
        };
        if key != last_header {
            let title = if role == "user" { "User" } else { "Assistant" };
            match time {
                Some(t) => {
                    let _ = write!(md, "\n## {title} · {t}\n\n");
                }
                None => {
                    let _ = write!(md, "\n## {title}\n\n");
                }
            }
            last_header = key;
        }
        md.push_str(&body);
    }
    md
}

fn push_text(body: &mut String, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    body.push_str(text);
    body.push_str("\n\n");
}

/// The most telling field of a tool input, on one line.
fn tool_summary(input: &Value) -> String {
    const KEYS: &[&str] = &[
        "command",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ];
    KEYS.iter()
        .find_map(|k| input[*k].as_str())
        .map(|s| one_line(s, TOOL_SUMMARY_CHARS))
        .unwrap_or_default()
}

/// `s` on one line (control characters as spaces), at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(start_offset: Option<u64>, implicit: bool) -> RequestRecord {
        RequestRecord {
            start_offset,
            implicit,
            ..RequestRecord::default()
        }
    }

    #[test]
    fn region_follows_the_request() {
        let mib = 1 << 20;
        assert_eq!(
            region_start(&request(Some(500), false), 900, mib),
            (500, false)
        );
        assert_eq!(region_start(&request(None, false), 900, mib), (0, false));
        // Capped to the newest `max` bytes.
        assert_eq!(
            region_start(&request(Some(100), false), 900, 300),
            (600, true)
        );
        // Shrunk below the opening offset: only the newest bytes.
        assert_eq!(
            region_start(&request(Some(5000), false), 900, 300),
            (600, true)
        );
        // Implicit: look back for the prompt.
        let (start, cut) = region_start(&request(Some(10 * mib), true), 11 * mib, 64 * mib);
        assert_eq!((start, cut), (10 * mib - IMPLICIT_LOOK_BACK, false));
    }

    #[test]
    fn region_starts_at_a_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"aaaa\nbbbb\ncccc\n").expect("write");
        assert_eq!(read_region(&p, 0, 15).expect("read"), b"aaaa\nbbbb\ncccc\n");
        assert_eq!(read_region(&p, 5, 15).expect("read"), b"bbbb\ncccc\n");
        assert_eq!(read_region(&p, 6, 15).expect("read"), b"cccc\n");
        assert_eq!(read_region(&p, 6, 10).expect("read"), b"");
    }

    #[test]
    fn markdown_log() {
        let jsonl = concat!(
            r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-05-01T10:00:00.000Z","message":{"role":"user","content":"Fix it."}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Looking."}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test\n-q"}}]}}"#,
            "\n",
            r#"{"type":"user","uuid":"r1","parentUuid":"a2","isMeta":true,"message":{"role":"user","content":"meta"}}"#,
            "\n",
        );
        let report = skein_passes::snapshot(jsonl.as_bytes(), &SnapshotOptions::default())
            .expect("snapshot")
            .1;
        let req = RequestRecord {
            id: "r-1".into(),
            session: "s".into(),
            ..RequestRecord::default()
        };
        let md = render_markdown(&req, &report, false, jsonl.as_bytes());
        assert!(md.starts_with("# Request r-1\n"), "{md}");
        assert!(md.contains("\n## User · 10:00:00\n\nFix it.\n"), "{md}");
        // One heading for the two lines of message m1; the tool call on one line.
        assert_eq!(md.matches("## Assistant").count(), 1, "{md}");
        assert!(md.contains("Looking.\n\n- `Bash` cargo test -q\n"), "{md}");
        assert!(!md.contains("meta"), "{md}");
    }
}
