//! Small, bounded reads of transcripts: the final assistant text of a (subagent) transcript,
//! the task list's changes in a byte range, the last human prompt, and the uuid of a request's
//! prompt record. Lines that do not parse (including a partial last line) are skipped.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;
use skein_analysis::TaskTracker;
use skein_core::record::{RecordType, UserFacts};

/// How much of a transcript's end is read to find the last assistant message or prompt.
pub const TAIL_WINDOW: u64 = 4 << 20;

/// Calls `f(offset, line)` for each line in `[from, to)` (without its newline). When `from > 0` and
/// `skip_partial` is set, the first line is skipped unless `from` follows a newline.
fn for_each_line(
    path: &Path,
    from: u64,
    to: u64,
    skip_partial: bool,
    mut f: impl FnMut(u64, &[u8]),
) -> io::Result<()> {
    let mut file = File::open(path)?;
    let mut skip_first = false;
    if from > 0 && skip_partial {
        let mut b = [0u8; 1];
        file.seek(SeekFrom::Start(from - 1))?;
        file.read_exact(&mut b)?;
        skip_first = b[0] != b'\n';
    }
    file.seek(SeekFrom::Start(from))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file.take(to.saturating_sub(from)));
    let mut line = Vec::new();
    let mut offset = from;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        let at = offset;
        offset += n as u64;
        if skip_first {
            skip_first = false;
            continue;
        }
        // An unterminated last line is passed too: if it is partial it will not parse.
        f(at, line.strip_suffix(b"\n").unwrap_or(&line));
    }
}

/// What `skein_core::record` needs to tell a human prompt (the one definition skein uses).
fn prompt_facts<'a>(v: &Value, first_text: Option<&'a str>) -> UserFacts<'a> {
    let flag = |k: &str| v[k] == Value::Bool(true);
    UserFacts {
        kind: RecordType::from_type(v["type"].as_str()),
        first_text,
        tool_results: v["message"]["content"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result")),
        meta: flag("isMeta"),
        compact_summary: flag("isCompactSummary"),
        sidechain: flag("isSidechain"),
        team: v["teamName"].as_str().is_some_and(|t| !t.is_empty()),
    }
}

fn text_of(v: &Value) -> Vec<&str> {
    match &v["message"]["content"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => Vec::new(),
    }
}

/// The text of the last assistant message with text in `path` (all text blocks of the lines
/// sharing its `message.id`, in file order). Synthetic and API-error messages are skipped.
pub fn last_assistant_text(path: &Path) -> io::Result<Option<String>> {
    let size = std::fs::metadata(path)?.len();
    let mut lines = Vec::new();
    let mut with_end = |_: u64, l: &[u8]| lines.push(l.to_vec());
    for_each_line(
        path,
        size.saturating_sub(TAIL_WINDOW),
        size,
        true,
        &mut with_end,
    )?;
    let mut parts: Vec<String> = Vec::new();
    let mut target: Option<Option<String>> = None;
    for raw in lines.iter().rev() {
        let Ok(v) = serde_json::from_slice::<Value>(raw) else {
            continue;
        };
        let is_assistant = v["type"] == "assistant";
        let id = v["message"]["id"].as_str().map(str::to_owned);
        match &target {
            None => {
                let synthetic = v["message"]["model"] == "<synthetic>"
                    || v["isApiErrorMessage"] == Value::Bool(true);
                let texts = text_of(&v);
                if !is_assistant || synthetic || texts.is_empty() {
                    continue;
                }
                parts.extend(texts.iter().rev().map(|s| (*s).to_owned()));
                target = Some(id);
            }
            Some(want) => {
                if !is_assistant {
                    if v["type"] == "user" {
                        break;
                    }
                    continue;
                }
                if want.is_none() || *want != id {
                    break;
                }
                parts.extend(text_of(&v).iter().rev().map(|s| (*s).to_owned()));
            }
        }
    }
    if target.is_none() {
        return Ok(None);
    }
    parts.reverse();
    Ok(Some(parts.join("\n")))
}

/// Feeds the lines of `[from, to)` to the task tracker (lines that cannot change the task
/// list are not parsed).
pub fn feed_tasks(path: &Path, from: u64, to: u64, tracker: &mut TaskTracker) -> io::Result<()> {
    if from >= to {
        return Ok(());
    }
    for_each_line(path, from, to, true, |_, line| tracker.line(line))
}

/// A human prompt record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptRecord {
    /// Where its line starts.
    pub offset: u64,
    pub uuid: String,
    /// Its text (the first text block).
    pub text: String,
}

/// The last human prompt in the last [`TAIL_WINDOW`] bytes before `end`.
pub fn last_prompt(path: &Path, end: u64) -> io::Result<Option<PromptRecord>> {
    let mut last = None;
    for_each_line(
        path,
        end.saturating_sub(TAIL_WINDOW),
        end,
        true,
        |at, line| {
            // Only user records can be prompts: skip the rest without parsing.
            if memchr::memmem::find(line, b"\"user\"").is_none() {
                return;
            }
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                return;
            };
            let texts = text_of(&v);
            if !prompt_facts(&v, texts.first().copied()).is_prompt() {
                return;
            }
            if let (Some(uuid), Some(text)) = (v["uuid"].as_str(), texts.first()) {
                last = Some(PromptRecord {
                    offset: at,
                    uuid: uuid.to_owned(),
                    text: (*text).to_owned(),
                });
            }
        },
    )?;
    Ok(last)
}

/// The uuid of the human prompt record `is_it(text, promptId)` accepts, searched near `around`
/// (the transcript size when the request opened): from 256 KiB before it to 1 MiB after,
/// restricted to `[start, end)`; the match closest to `around` wins.
pub fn find_prompt_uuid(
    path: &Path,
    around: u64,
    start: u64,
    end: u64,
    is_it: &dyn Fn(&str, Option<&str>) -> bool,
) -> io::Result<Option<String>> {
    let from = around.saturating_sub(256 << 10).max(start);
    let to = end.min(around.saturating_add(1 << 20));
    if from >= to {
        return Ok(None);
    }
    let mut best: Option<(u64, String)> = None;
    for_each_line(path, from, to, true, |at, line| {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let texts = text_of(&v);
        if !prompt_facts(&v, texts.first().copied()).is_prompt() {
            return;
        }
        let Some(uuid) = v["uuid"].as_str() else {
            return;
        };
        if is_it(texts.first().copied().unwrap_or(""), v["promptId"].as_str()) {
            let dist = at.abs_diff(around);
            if best.as_ref().is_none_or(|(d, _)| dist < *d) {
                best = Some((dist, uuid.to_owned()));
            }
        }
    })?;
    Ok(best.map(|(_, u)| u))
}
