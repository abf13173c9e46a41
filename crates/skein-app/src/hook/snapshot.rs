//! The `snapshot` pass (Stop): the current request's part of the session, cut by
//! `skein-passes`' snapshot (from the request's prompt to the end of the active branch), written
//! to the request directory as
//!
//! * `session-logs/snapshot.jsonl`: the self-contained request transcript (redacted when
//!   `redact = true`), beside the subagents' copies (`skein-hook`'s `extract`);
//! * `session-log.md`: the request's facts (id, prompt, records, todos) over the same transcript
//!   rendered by `skein show`'s renderer (the one Markdown renderer).
//!
//! Only the request's bytes are read: from the transcript size recorded when the request
//! opened (`start_offset`) to the end of the last complete line, at most `max_bytes` (the
//! newest ones). A later Stop of the same request reads only from the line of the record the
//! last snapshot started at (carried in the pass state): everything a snapshot keeps descends
//! from its start record, so it was written after it, and the cut from there is the cut from
//! the request's opening (the reasoning is at [`resume_from`]; a corpus test holds it). Both
//! files are derived and rewritten on every Stop, so they are replaced atomically (rename)
//! without fsync: after a crash the next Stop writes them again.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use skein_analysis::AnalysisOptions;
use skein_core::Parser;
use skein_hook::{ChangeKind, PassInput, PassReport, RequestRecord};
use skein_layout::SessionFiles;
use skein_passes::{Error as SnapshotError, SnapshotOptions, SnapshotReport, Start};
use skein_redact::RedactOptions;
use skein_reports::load_session;
use skein_reports::show::{ShowOptions, ShowVisitor, render_session};
use skein_reports::tree::link_session;
use skein_store::Durability;

use super::{Passes, pass_options, summary};
use crate::error::Error;
use crate::transform::redact_line;

/// The request transcript written next to `session-log.md`.
pub const SNAPSHOT_JSONL: &str = "snapshot.jsonl";
/// Default cap on the request bytes read per Stop.
const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// How far before an implicit request's opening offset its prompt is looked for.
const IMPLICIT_LOOK_BACK: u64 = 4 << 20;

/// `[pass.snapshot]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct SnapshotPassOptions {
    /// Most request bytes read per run (the newest ones); default 64 MiB.
    max_bytes: Option<u64>,
    /// Redaction rules for this pass (used when `redact = true`); default: `[redaction]`.
    redact: Option<RedactOptions>,
}

pub(super) fn run(passes: &mut Passes, input: &PassInput<'_>) -> Result<PassReport, Error> {
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
        Some(ChangeKind::Unchanged) if log_path.is_file() => {
            return Ok(PassReport {
                state: input.state.cloned(),
                ..PassReport::default()
            });
        }
        Some(_) => {}
    }
    let opts: SnapshotPassOptions = pass_options(input)?;
    let max = opts.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).max(1);
    let (start, truncated) = region_start(request, input.end, max);
    let io = |error| Error::Io {
        path: transcript.to_path_buf(),
        error,
    };
    let mut found = None;
    if let Some(from) = resume_from(input.state, request, start, input.end) {
        let (bytes, base) = read_region(transcript, from, input.end).map_err(io)?;
        found = cut(&bytes, request)?
            .filter(|(_, r)| closed_after(&bytes, r.start.line))
            .map(|r| (bytes, base, r));
    }
    if found.is_none() {
        let (bytes, base) = read_region(transcript, start, input.end).map_err(io)?;
        found = cut(&bytes, request)?.map(|r| (bytes, base, r));
    }
    let Some((bytes, base, (out, report))) = found else {
        return Ok(summary("no prompt on the active branch yet"));
    };
    let carried = Carried {
        request: request.id.clone(),
        start_uuid: report.start.uuid.clone(),
        start_offset: base + report.first_byte,
    };
    let out = if input.config.redact {
        let redactor = passes.redactor(opts.redact.as_ref().unwrap_or(&input.config.redaction))?;
        let mut red = Vec::with_capacity(out.len());
        for line in out.split_inclusive(|&b| b == b'\n') {
            redact_line(&redactor, line, &mut red);
        }
        red
    } else {
        out
    };
    let logs = dir.join(skein_hook::state::SESSION_LOGS_DIR);
    skein_store::private::create_dir_all(&logs).map_err(|error| Error::Io {
        path: logs.clone(),
        error,
    })?;
    let jsonl = logs.join(SNAPSHOT_JSONL);
    replace(&jsonl, &out)?;
    let md = render_markdown(request, &report, truncated, &jsonl)?;
    replace(&log_path, md.as_bytes())?;
    let mut done = summary(&format!(
        "{} record(s) from {} ({} bytes read{})",
        report.records,
        report.start.uuid,
        bytes.len(),
        if truncated { ", truncated" } else { "" }
    ));
    done.state = serde_json::to_value(&carried).ok();
    Ok(done)
}

/// What a Stop leaves for the next one of the same request: where its snapshot started.
#[derive(Debug, Serialize, Deserialize)]
struct Carried {
    request: String,
    start_uuid: String,
    /// Byte offset in the transcript of the first line the snapshot kept (the start record's,
    /// or a line before it that belongs to the snapshot).
    start_offset: u64,
}

/// Where the next snapshot of `request` may start reading instead of `start`: the first line
/// the last snapshot kept (its start record `S`, or a line before it that belongs to it: the
/// file-history record of `S`'s message, a `tool_use` whose result it holds), when the state is
/// this request's and lies in the region.
///
/// Why the cut from there equals the cut from `start`: every record a snapshot keeps (the
/// branch from `S` to the leaf, what hangs from it, metadata after `S`) descends from `S` or
/// follows it, or is one of those lines before it; the leaf is the same record in both regions.
/// With a known prompt uuid `U` the cut starts at `U` when it is on the branch, so only `U = S`
/// is safe (a `U` before `S` could be back on the branch after a rewind). Without one the cut
/// starts at the last prompt on the branch, which is the last one in the shorter region when
/// there is one at all; when the shorter region finds none, the caller reads the whole region.
fn resume_from(
    state: Option<&serde_json::Value>,
    request: &RequestRecord,
    start: u64,
    end: u64,
) -> Option<u64> {
    let c: Carried = serde_json::from_value(state?.clone()).ok()?;
    let same_start = request
        .start_uuid
        .as_deref()
        .is_none_or(|u| u == c.start_uuid);
    (c.request == request.id && same_start && (start..end).contains(&c.start_offset))
        .then_some(c.start_offset)
}

/// True when every record after line `start` (1-based) of `bytes` names only parents (and
/// logical parents, across a compaction) that are in `bytes`. Otherwise a record reaches back
/// before the region (a rewind to an earlier point, a compaction of earlier records), so the
/// active branch there may differ from the branch seen in the region alone: the caller reads
/// the whole request instead.
fn closed_after(bytes: &[u8], start: u64) -> bool {
    let mut parser = Parser::new();
    let mut seen: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
    let mut links: Vec<String> = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(p) = parser.parse(line) else { continue };
        let e = &p.envelope;
        if let Some(u) = e.uuid.get() {
            seen.insert(u.to_owned());
        }
        if i as u64 + 1 > start {
            links.extend(e.parent_uuid.get().map(str::to_owned));
            links.extend(e.logical_parent_uuid.get().map(str::to_owned));
        }
    }
    links.iter().all(|l| seen.contains(l))
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

/// `[start, end)` of the file, from the first line that starts at or after `start`, and the
/// offset in the file where the returned bytes begin.
fn read_region(path: &Path, start: u64, end: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let mut file = File::open(path)?;
    let from = start.saturating_sub(1);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(usize::try_from(end - from).unwrap_or(0));
    file.take(end.saturating_sub(from)).read_to_end(&mut buf)?;
    if start == 0 {
        return Ok((buf, 0));
    }
    // buf[0] is the byte before `start`: drop everything up to the first newline from there.
    let cut = memchr::memchr(b'\n', &buf).map_or(buf.len(), |i| i + 1);
    buf.drain(..cut);
    Ok((buf, from + cut as u64))
}

/// Runs the snapshot from the request's prompt record (or the last prompt when it is not known
/// or not on the active branch). `None` when the bytes hold no prompt or no branch yet.
fn cut(bytes: &[u8], request: &RequestRecord) -> Result<Option<(Vec<u8>, SnapshotReport)>, Error> {
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
            Err(e) => return Err(Error::Pass(format!("snapshot: {e}"))),
        }
    }
    Ok(None)
}

/// Replaces `path` by rename, without fsync (derived data, see the module docs).
fn replace(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    skein_store::write_atomic_with(path, bytes, Durability::RenameOnly).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// The request as Markdown: its facts and todos, then the request transcript at `jsonl`
/// rendered by `skein show`'s renderer.
fn render_markdown(
    request: &RequestRecord,
    report: &SnapshotReport,
    truncated: bool,
    jsonl: &Path,
) -> Result<String, Error> {
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
    md.push_str("\n---\n\n");
    md.push_str(&shown(&request.session, jsonl)?);
    Ok(md)
}

/// The transcript at `jsonl` as `skein show` renders it (no subagent files: a request
/// snapshot has none beside it).
fn shown(session_id: &str, jsonl: &Path) -> Result<String, Error> {
    let files = SessionFiles {
        session_id: session_id.to_owned(),
        main: Some(jsonl.to_path_buf()),
        ..SessionFiles::default()
    };
    let options = AnalysisOptions {
        node_tools: true,
        ..AnalysisOptions::default()
    };
    let loaded =
        load_session::<IgnoredAny, ShowVisitor>(&files, &options, &mut Parser::new(), false)?;
    let links = link_session(&loaded, |v| &v.links);
    let show = ShowOptions {
        agents: false,
        ..ShowOptions::default()
    };
    render_session(&loaded, &links, &show).map_err(|e| Error::Pass(e.to_string()))
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
        let read = |s, e| {
            let (b, base) = read_region(&p, s, e).expect("read");
            (String::from_utf8(b).expect("utf-8"), base)
        };
        assert_eq!(read(0, 15), ("aaaa\nbbbb\ncccc\n".into(), 0));
        assert_eq!(read(5, 15), ("bbbb\ncccc\n".into(), 5));
        assert_eq!(read(6, 15), ("cccc\n".into(), 10));
        assert_eq!(read(6, 10), (String::new(), 10));
    }

    /// The claim behind [`resume_from`], on real sessions: a first Stop at 40%, 60% or 80%
    /// of a transcript finds its start `S`; at the end, the cut of the bytes from `S`'s line is
    /// the cut of the whole transcript whenever it finds a prompt (else the hook reads it all).
    #[test]
    fn resuming_at_the_last_start_cuts_the_same_on_the_corpus() {
        let Some((_, files)) = skein_testkit::corpus_files() else {
            return;
        };
        let (mut resumed, mut fell_back) = (0, 0);
        for path in files {
            let bytes = std::fs::read(&path).expect("read");
            let Ok(Some(full)) = cut(&bytes, &RequestRecord::default()) else {
                continue;
            };
            let lines: Vec<usize> = std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1))
                .collect();
            for pct in [40, 60, 80] {
                let prefix = &bytes[..lines[lines.len() * pct / 100]];
                let Ok(Some((_, first))) = cut(prefix, &RequestRecord::default()) else {
                    continue;
                };
                let from = usize::try_from(first.first_byte).expect("usize");
                let sub = &bytes[from..];
                match cut(sub, &RequestRecord::default()) {
                    Ok(Some(again)) if closed_after(sub, again.1.start.line) => {
                        resumed += 1;
                        assert_eq!(again.1.start.uuid, full.1.start.uuid, "{}", path.display());
                        assert!(again.0 == full.0, "{} at {pct}%", path.display());
                    }
                    _ => fell_back += 1,
                }
                // A request that knows its prompt: the cut starts there in both regions.
                let known = RequestRecord {
                    start_uuid: Some(first.start.uuid.clone()),
                    ..RequestRecord::default()
                };
                let whole = cut(&bytes, &known).expect("cut");
                if let (Ok(Some(again)), Some(whole)) = (cut(sub, &known), whole)
                    && closed_after(sub, again.1.start.line)
                {
                    assert!(
                        again.0 == whole.0,
                        "{} at {pct}%, known: {:?} {:?} vs {:?} {:?} ({} {})",
                        path.display(),
                        again.1.start,
                        again.1.first_byte,
                        whole.1.start,
                        whole.1.first_byte,
                        again.0.len(),
                        whole.0.len()
                    );
                }
            }
        }
        assert!(resumed > 100, "resumed {resumed}, fell back {fell_back}");
    }

    #[test]
    fn markdown_log_uses_the_show_renderer() {
        let jsonl = concat!(
            r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-05-01T10:00:00.000Z","message":{"role":"user","content":"Fix it."}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-05-01T10:00:01.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Looking."}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","timestamp":"2026-05-01T10:00:02.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test -q"}}]}}"#,
            "\n",
        );
        let report = skein_passes::snapshot(jsonl.as_bytes(), &SnapshotOptions::default())
            .expect("snapshot")
            .1;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(SNAPSHOT_JSONL);
        std::fs::write(&path, jsonl).expect("write");
        let req = RequestRecord {
            id: "r-1".into(),
            session: "s".into(),
            ..RequestRecord::default()
        };
        let md = render_markdown(&req, &report, false, &path).expect("render");
        assert!(md.starts_with("# Request r-1\n\n- session: `s`\n"), "{md}");
        // The same Markdown `skein show` writes for the transcript, after the request's facts.
        let shown = shown("s", &path).expect("show");
        assert!(md.ends_with(&shown), "{md}");
        assert!(
            shown.contains("Fix it.") && shown.contains("Looking."),
            "{shown}"
        );
        assert!(shown.contains("cargo test -q"), "{shown}");
    }
}
