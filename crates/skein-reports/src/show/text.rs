//! Text out of records: message content, tool results, one-line previews, and the Markdown
//! escaping `skein show` needs. Shared with `skein tree` for its previews.

use std::fmt::Write as _;

use serde_json::Value;

use crate::tools::{clip, input_summary};

/// Parses one transcript line into a JSON value, repairing invalid UTF-8 and lone surrogate
/// escapes first when the plain parse fails. `None` when the line is not JSON.
pub fn parse_line(text: &[u8]) -> Option<Value> {
    serde_json::from_slice(text).ok().or_else(|| {
        let repaired = skein_core::repair::repair_line(text);
        serde_json::from_slice(&repaired).ok()
    })
}

/// The interrupt markers Claude Code writes as user text.
pub fn is_interrupt(text: &str) -> bool {
    text.trim_start()
        .starts_with("[Request interrupted by user")
}

/// The text of a `tool_result` block's `content`: the string itself, or the text parts of an
/// array joined by newlines (an image part becomes `[image]`).
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                let piece = match p.get("type").and_then(Value::as_str) {
                    Some("text") => p.get("text").and_then(Value::as_str).map(str::to_owned),
                    Some("image") => Some("[image]".to_owned()),
                    Some("tool_reference") => p
                        .get("tool_name")
                        .and_then(Value::as_str)
                        .map(|n| format!("[tool {n}]")),
                    Some(other) => Some(format!("[{other}]")),
                    None => p.as_str().map(str::to_owned),
                };
                if let Some(piece) = piece {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&piece);
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// The text of `message.content`: a string, or the `text` blocks joined by blank lines.
pub fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A one-line description of a record: its subtype and a short preview.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preview {
    /// `system`: `subtype`; `progress`: `data.type`; `attachment`: `attachment.type`; `user`:
    /// `prompt`, `tool_result`, `meta`, `compact_summary` or `interrupt`; `assistant`: the
    /// content block types joined by `+` (`text`, `thinking`, `tool_use`, …), or `synthetic`.
    pub subtype: Option<String>,
    /// At most [`PREVIEW_CHARS`] characters, whitespace collapsed.
    pub text: String,
    /// For tool results: the `tool_use_id` of the first `tool_result` block.
    pub result_of: Option<String>,
}

/// Length of a preview, in characters.
pub const PREVIEW_CHARS: usize = 60;

/// At most `max` characters of `s` (on a character boundary), cheaply, before [`clip`].
fn head(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn short_clip(s: &str) -> String {
    // Clip a bounded head so that huge texts cost nothing; clip() collapses whitespace.
    clip(head(s, PREVIEW_CHARS * 8), PREVIEW_CHARS)
}

/// The subtype and preview of a record.
pub fn preview(v: &Value) -> Preview {
    let kind = str_at(v, "type").unwrap_or("");
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let content = v.get("message").and_then(|m| m.get("content"));
    match kind {
        "user" => {
            let blocks = content.and_then(Value::as_array);
            let results: Vec<&Value> = blocks
                .into_iter()
                .flatten()
                .filter(|b| str_at(b, "type") == Some("tool_result"))
                .collect();
            let text = content.map(message_text).unwrap_or_default();
            if flag("isCompactSummary") {
                return Preview {
                    subtype: Some("compact_summary".into()),
                    text: short_clip(&text),
                    result_of: None,
                };
            }
            if let Some(first) = results.first() {
                let error = first
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let body = first.get("content").map(result_text).unwrap_or_default();
                let mut t = String::new();
                if error {
                    t.push_str("error: ");
                }
                if results.len() > 1 {
                    let _ = write!(t, "(+{} results) ", results.len() - 1);
                }
                t.push_str(head(&body, PREVIEW_CHARS * 8));
                return Preview {
                    subtype: Some("tool_result".into()),
                    text: short_clip(&t),
                    result_of: str_at(first, "tool_use_id").map(str::to_owned),
                };
            }
            let images = blocks
                .into_iter()
                .flatten()
                .filter(|b| str_at(b, "type") == Some("image"))
                .count();
            let mut t = text;
            if t.trim().is_empty() && images > 0 {
                t = format!("[{images} image(s)]");
            }
            let subtype = if flag("isMeta") {
                "meta"
            } else if is_interrupt(&t) {
                "interrupt"
            } else {
                "prompt"
            };
            Preview {
                subtype: Some(subtype.into()),
                text: short_clip(&t),
                result_of: None,
            }
        }
        "assistant" => {
            let model = v
                .get("message")
                .and_then(|m| str_at(m, "model"))
                .unwrap_or("");
            let mut kinds: Vec<&str> = Vec::new();
            let mut parts: Vec<String> = Vec::new();
            match content {
                Some(Value::String(s)) => {
                    kinds.push("text");
                    parts.push(head(s, PREVIEW_CHARS * 8).to_owned());
                }
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        let t = str_at(b, "type").unwrap_or("?");
                        if !kinds.contains(&t) {
                            kinds.push(t);
                        }
                        match t {
                            "text" => parts.push(
                                head(str_at(b, "text").unwrap_or(""), PREVIEW_CHARS * 8).to_owned(),
                            ),
                            "thinking" => parts.push(format!(
                                "(thinking) {}",
                                head(str_at(b, "thinking").unwrap_or(""), PREVIEW_CHARS * 8)
                            )),
                            "redacted_thinking" => parts.push("(redacted thinking)".into()),
                            "tool_use" | "server_tool_use" => {
                                let name = str_at(b, "name").unwrap_or("?");
                                let summary = input_summary(name, b.get("input"));
                                parts.push(format!("{name} {summary}"));
                            }
                            other => parts.push(format!("({other})")),
                        }
                    }
                }
                _ => {}
            }
            let subtype = if model == "<synthetic>" {
                "synthetic".to_owned()
            } else if kinds.is_empty() {
                "empty".to_owned()
            } else {
                kinds.join("+")
            };
            Preview {
                subtype: Some(subtype),
                text: short_clip(&parts.join(" · ")),
                result_of: None,
            }
        }
        "system" => {
            let subtype = str_at(v, "subtype").map(str::to_owned);
            let text = match subtype.as_deref() {
                Some("compact_boundary") => {
                    let m = v.get("compactMetadata");
                    let trigger = m.and_then(|m| str_at(m, "trigger")).unwrap_or("?");
                    match m.and_then(|m| m.get("preTokens")).and_then(Value::as_u64) {
                        Some(t) => format!("{trigger} compaction, {t} tokens before"),
                        None => format!("{trigger} compaction"),
                    }
                }
                Some("turn_duration") => v
                    .get("durationMs")
                    .and_then(Value::as_u64)
                    .map(|ms| format!("{ms} ms"))
                    .unwrap_or_default(),
                Some("stop_hook_summary") => {
                    let n = v.get("hookCount").and_then(Value::as_u64).unwrap_or(0);
                    format!("{n} hook(s)")
                }
                _ => match v.get("content") {
                    Some(Value::String(s)) => head(s, PREVIEW_CHARS * 8).to_owned(),
                    _ => str_at(v, "level").unwrap_or("").to_owned(),
                },
            };
            Preview {
                subtype,
                text: short_clip(&text),
                result_of: None,
            }
        }
        "progress" => {
            let data = v.get("data");
            let subtype = data.and_then(|d| str_at(d, "type")).map(str::to_owned);
            let text = data.map_or_else(String::new, |d| {
                let pick = ["hookEvent", "hookName", "agentId", "output", "prompt"];
                pick.iter()
                    .filter_map(|k| str_at(d, k))
                    .take(2)
                    .map(|s| head(s, PREVIEW_CHARS * 4))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            Preview {
                subtype,
                text: short_clip(&text),
                result_of: None,
            }
        }
        "attachment" => {
            let a = v.get("attachment");
            let subtype = a.and_then(|a| str_at(a, "type")).map(str::to_owned);
            let text = a.map_or_else(String::new, |a| {
                let pick = ["prompt", "hookName", "content", "planFilePath", "filename"];
                pick.iter()
                    .find_map(|k| match a.get(*k) {
                        Some(Value::String(s)) => Some(head(s, PREVIEW_CHARS * 8).to_owned()),
                        Some(c @ Value::Array(_)) => Some(result_text(c)),
                        _ => None,
                    })
                    .unwrap_or_default()
            });
            Preview {
                subtype,
                text: short_clip(&text),
                result_of: None,
            }
        }
        _ => Preview::default(),
    }
}

/// A code fence longer than any backtick run in `text` (at least three backticks).
pub fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Escapes `&`, `<` and `>` for HTML (inside `<summary>`).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Markdown text with every `<` outside code (fenced blocks and backtick spans) written as
/// `&lt;`, so that text such as `Vec<String>` or `<tag>` is not swallowed as HTML.
pub fn escape_markdown_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<String> = None;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let trimmed = line.trim_start();
        let marker: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let is_fence =
            marker.len() >= 3 && marker.chars().all(|c| c == marker.as_bytes()[0] as char);
        if let Some(open) = &fence {
            out.push_str(line);
            if is_fence
                && marker.starts_with(open.as_str())
                && trimmed[marker.len()..].trim().is_empty()
            {
                fence = None;
            }
            continue;
        }
        if is_fence {
            fence = Some(marker);
            out.push_str(line);
            continue;
        }
        escape_line(line, &mut out);
    }
    out
}

fn escape_line(line: &str, out: &mut String) {
    let b = line.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                let start = i;
                while i < b.len() && b[i] == b'`' {
                    i += 1;
                }
                let n = i - start;
                // find a closing run of exactly n backticks
                let mut j = i;
                let mut close = None;
                while j < b.len() {
                    if b[j] == b'`' {
                        let s = j;
                        while j < b.len() && b[j] == b'`' {
                            j += 1;
                        }
                        if j - s == n {
                            close = Some(j);
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                if let Some(end) = close {
                    i = end;
                }
            }
            b'<' => {
                out.push_str(&line[copied..i]);
                out.push_str("&lt;");
                i += 1;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&line[copied..]);
}

/// The value between `<tag>` and `</tag>` in `text`, if present.
pub fn tag<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(&text[start..end])
}

/// `12345` → `12,345`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most `max` bytes of `text` cut on a character boundary (`max == 0`: no limit), and
/// whether it was cut.
pub fn truncate(text: &str, max: usize) -> (&str, bool) {
    if max == 0 || text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_outside_code_only() {
        assert_eq!(
            escape_markdown_html("a <b> `Vec<T>` c"),
            "a &lt;b> `Vec<T>` c"
        );
        assert_eq!(
            escape_markdown_html("x\n```\nfn f<T>() {}\n```\ny<z"),
            "x\n```\nfn f<T>() {}\n```\ny&lt;z"
        );
        assert_eq!(escape_markdown_html("`` a ` <b> ``"), "`` a ` <b> ``");
        assert_eq!(escape_markdown_html("unclosed ` <b>"), "unclosed ` &lt;b>");
    }

    #[test]
    fn fences_and_numbers() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("has ```` four"), "`````");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(167_393), "167,393");
        assert_eq!(truncate("héllo", 2), ("h", true));
        assert_eq!(truncate("hello", 0), ("hello", false));
    }

    #[test]
    fn previews() {
        let v: Value = serde_json::from_str(
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"line one\nline two"}],"is_error":true}]}}"#,
        )
        .expect("json");
        let p = preview(&v);
        assert_eq!(p.subtype.as_deref(), Some("tool_result"));
        assert_eq!(p.text, "error: line one line two");
        assert_eq!(p.result_of.as_deref(), Some("t1"));
        let v: Value = serde_json::from_str(
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls -la"}}]}}"#,
        )
        .expect("json");
        let p = preview(&v);
        assert_eq!(p.subtype.as_deref(), Some("tool_use"));
        assert_eq!(p.text, "Bash ls -la");
        let long = "word ".repeat(100);
        let v = serde_json::json!({"type":"user","message":{"content": long}});
        let p = preview(&v);
        assert_eq!(p.text.chars().count(), PREVIEW_CHARS);
        assert!(p.text.ends_with('…'));
    }
}
