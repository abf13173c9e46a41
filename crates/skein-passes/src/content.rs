//! The content rules of `prune`, applied to one parsed record: thinking blocks, inline image
//! and document data, long tool results, and the `toolUseResult` copy of tool output. Every
//! rule leaves a record it has already pruned unchanged, so pruning twice changes nothing.

use serde_json::{Map, Value};

use crate::edit::json_len;
use crate::prune::{PruneOptions, RuleStats, ToolUseResultMode};

/// Strings inside `toolUseResult` shorter than this are never replaced as duplicates.
pub const DEDUPE_MIN_BYTES: usize = 64;
/// `slim` replaces strings inside `toolUseResult` longer than this.
pub const SLIM_MAX_BYTES: usize = 1024;
/// Text of a `toolUseResult` string that duplicated the tool result.
pub const DUPLICATE_MARKER: &str = "[skein prune: same as the tool_result content]";

const TRUNCATED_PREFIX: &str = "\n[skein prune: ";
const TRUNCATED_SUFFIX: &str = " bytes of tool output removed]\n";

/// What the content rules did to one record.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ContentStats {
    pub(crate) thinking: RuleStats,
    pub(crate) images: RuleStats,
    pub(crate) tool_results: RuleStats,
    pub(crate) tool_use_result: RuleStats,
}

impl ContentStats {
    pub(crate) fn changed(&self) -> bool {
        self.thinking.records
            + self.images.records
            + self.tool_results.records
            + self.tool_use_result.records
            > 0
    }
}

/// The outcome for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Unchanged,
    Changed,
    /// An assistant record whose content held only thinking blocks.
    OnlyThinking,
}

/// Applies the content rules of `o` to the record `v`.
pub(crate) fn transform(v: &mut Value, o: &PruneOptions, s: &mut ContentStats) -> Outcome {
    let Value::Object(rec) = v else {
        return Outcome::Unchanged;
    };
    let assistant = rec.get("type").and_then(Value::as_str) == Some("assistant");
    if o.thinking && assistant {
        let removed = drop_thinking(rec);
        if removed.blocks > 0 {
            if content_is_empty_array(rec) {
                return Outcome::OnlyThinking;
            }
            s.thinking = removed;
        }
    }
    if o.images {
        let mut st = RuleStats::default();
        if let Some(content) = rec.get_mut("message").and_then(|m| m.get_mut("content")) {
            replace_media(content, &mut st);
        }
        if let Some(tur) = rec.get_mut("toolUseResult") {
            replace_base64_fields(tur, &mut st);
        }
        if st.blocks > 0 {
            st.records = 1;
            s.images = st;
        }
    }
    let reference = if matches!(
        o.tool_use_result,
        ToolUseResultMode::Keep | ToolUseResultMode::Drop
    ) {
        None
    } else {
        rec.get("message")
            .and_then(|m| m.get("content"))
            .map(result_text)
    };
    if let Some(limit) = o.max_tool_result_bytes
        && let Some(Value::Array(blocks)) =
            rec.get_mut("message").and_then(|m| m.get_mut("content"))
    {
        let mut st = RuleStats::default();
        for b in blocks.iter_mut() {
            if b.get("type").and_then(Value::as_str) == Some("tool_result")
                && let Some(c) = b.get_mut("content")
            {
                let before = json_len(c);
                if truncate_result(c, limit) {
                    st.blocks += 1;
                    st.bytes += before.saturating_sub(json_len(c));
                }
            }
        }
        if st.blocks > 0 {
            st.records = 1;
            s.tool_results = st;
        }
    }
    if o.tool_use_result != ToolUseResultMode::Keep && rec.contains_key("toolUseResult") {
        let before = json_len(&rec["toolUseResult"]);
        let mut blocks = 0;
        let after = if o.tool_use_result == ToolUseResultMode::Drop {
            rec.shift_remove("toolUseResult");
            blocks = 1;
            0
        } else {
            let reference = reference.unwrap_or_default();
            let normalized = strip_line_numbers(&reference);
            let tur = rec.get_mut("toolUseResult").expect("checked above");
            dedupe(tur, &reference, &normalized, &mut blocks);
            if o.tool_use_result == ToolUseResultMode::Slim {
                slim(tur, &mut blocks);
            }
            // `"toolUseResult":` plus a comma: counted only for a dropped key.
            json_len(tur)
        };
        if blocks > 0 {
            let extra = if after == 0 {
                "\"toolUseResult\":,".len() as u64
            } else {
                0
            };
            s.tool_use_result = RuleStats {
                records: 1,
                blocks,
                bytes: (before + extra).saturating_sub(after),
            };
        }
    }
    if s.changed() {
        Outcome::Changed
    } else {
        Outcome::Unchanged
    }
}

fn content_is_empty_array(rec: &Map<String, Value>) -> bool {
    rec.get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
}

fn block_type(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

/// Removes whole `thinking` / `redacted_thinking` blocks (a block is never edited, so the
/// signatures of the blocks that stay remain valid).
fn drop_thinking(rec: &mut Map<String, Value>) -> RuleStats {
    let mut st = RuleStats::default();
    let Some(Value::Array(blocks)) = rec.get_mut("message").and_then(|m| m.get_mut("content"))
    else {
        return st;
    };
    blocks.retain(|b| {
        if matches!(block_type(b), Some("thinking" | "redacted_thinking")) {
            st.blocks += 1;
            st.bytes += json_len(b) + 1;
            false
        } else {
            true
        }
    });
    if st.blocks > 0 {
        st.records = 1;
    }
    st
}

/// Decoded size of base64 text.
fn decoded_len(data: &str) -> u64 {
    let n = data.trim_end_matches('=').len() as u64;
    n * 3 / 4
}

/// Replaces `image` / `document` blocks carrying base64 data (also inside tool results) by a
/// text block naming the media type and the decoded size.
fn replace_media(content: &mut Value, st: &mut RuleStats) {
    let Value::Array(blocks) = content else {
        return;
    };
    for b in blocks.iter_mut() {
        match block_type(b) {
            Some(kind @ ("image" | "document")) => {
                let Some(source) = b.get("source") else {
                    continue;
                };
                let Some(data) = source.get("data").and_then(Value::as_str) else {
                    continue;
                };
                if source.get("type").and_then(Value::as_str) != Some("base64") {
                    continue;
                }
                let media = source
                    .get("media_type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let text = format!(
                    "[skein prune: {kind} removed, {media}, {} bytes]",
                    decoded_len(data)
                );
                let mut placeholder = Map::new();
                placeholder.insert("type".into(), Value::String("text".into()));
                placeholder.insert("text".into(), Value::String(text));
                let placeholder = Value::Object(placeholder);
                st.blocks += 1;
                st.bytes += json_len(b).saturating_sub(json_len(&placeholder));
                *b = placeholder;
            }
            Some("tool_result") => {
                if let Some(inner) = b.get_mut("content") {
                    replace_media(inner, st);
                }
            }
            _ => {}
        }
    }
}

/// Replaces long `base64` string fields anywhere inside `toolUseResult` (the Read tool's
/// copy of an image).
fn replace_base64_fields(v: &mut Value, st: &mut RuleStats) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if k == "base64"
                    && let Value::String(s) = val
                    && s.len() > 256
                {
                    let text = format!("[skein prune: base64 removed, {} bytes]", decoded_len(s));
                    st.blocks += 1;
                    st.bytes += (s.len() - text.len()) as u64;
                    *s = text;
                } else {
                    replace_base64_fields(val, st);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                replace_base64_fields(item, st);
            }
        }
        _ => {}
    }
}

/// The text of every `tool_result` block of a content array, joined by newlines.
fn result_text(content: &Value) -> String {
    let mut out = String::new();
    let Value::Array(blocks) = content else {
        return out;
    };
    for b in blocks {
        if block_type(b) != Some("tool_result") {
            continue;
        }
        match b.get("content") {
            Some(Value::String(s)) => {
                out.push_str(s);
                out.push('\n');
            }
            Some(Value::Array(parts)) => {
                for p in parts {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        out.push_str(t);
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The text with `cat -n` line-number prefixes (`   12→` or `   12\t`) removed, as the Read
/// tool formats file contents.
fn strip_line_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &trimmed[digits..];
        if digits > 0
            && let Some(r) = rest
                .strip_prefix('\u{2192}')
                .or_else(|| rest.strip_prefix('\t'))
        {
            out.push_str(r);
            continue;
        }
        out.push_str(line);
    }
    out
}

fn is_duplicate(s: &str, reference: &str, normalized: &str) -> bool {
    if s.len() < DEDUPE_MIN_BYTES {
        return false;
    }
    let t = s.trim_end();
    if t.len() < DEDUPE_MIN_BYTES / 2 {
        return false;
    }
    reference.contains(t) || normalized.contains(t)
}

/// Replaces strings that repeat the tool result's text.
fn dedupe(v: &mut Value, reference: &str, normalized: &str, count: &mut u64) {
    match v {
        Value::String(s) if is_duplicate(s, reference, normalized) => {
            DUPLICATE_MARKER.clone_into(s);
            *count += 1;
        }
        Value::Array(items) => {
            for item in items {
                dedupe(item, reference, normalized, count);
            }
        }
        Value::Object(map) => {
            for (_, val) in map.iter_mut() {
                dedupe(val, reference, normalized, count);
            }
        }
        _ => {}
    }
}

/// Replaces long strings by a note of their size.
fn slim(v: &mut Value, count: &mut u64) {
    match v {
        Value::String(s) if s.len() > SLIM_MAX_BYTES => {
            *s = format!("[skein prune: {} bytes removed]", s.len());
            *count += 1;
        }
        Value::Array(items) => {
            for item in items {
                slim(item, count);
            }
        }
        Value::Object(map) => {
            for (_, val) in map.iter_mut() {
                slim(val, count);
            }
        }
        _ => {}
    }
}

fn floor_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn marker(removed: usize, original: usize) -> String {
    format!("{TRUNCATED_PREFIX}{removed} of {original}{TRUNCATED_SUFFIX}")
}

/// Whether `s` holds a truncation marker (so the result was truncated before).
fn is_truncated(s: &str) -> bool {
    memchr::memmem::find_iter(s.as_bytes(), TRUNCATED_PREFIX.as_bytes()).any(|at| {
        let rest = &s[at + TRUNCATED_PREFIX.len()..];
        let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
        let n = digits(rest);
        n > 0
            && rest[n..].strip_prefix(" of ").is_some_and(|r| {
                let m = digits(r);
                m > 0 && r[m..].starts_with(TRUNCATED_SUFFIX)
            })
    })
}

/// How much of each text segment to keep: a head from the front and a tail from the back,
/// `budget` bytes in all (split evenly), on character boundaries.
fn plan_cut(texts: &[&str], budget: usize) -> Vec<(usize, usize)> {
    let mut keep: Vec<(usize, usize)> = vec![(0, 0); texts.len()];
    let mut head = budget / 2;
    for (i, t) in texts.iter().enumerate() {
        let p = floor_boundary(t, head.min(t.len()));
        keep[i].0 = p;
        head -= p;
        if p < t.len() {
            break;
        }
    }
    let mut tail = budget - budget / 2;
    for (i, t) in texts.iter().enumerate().rev() {
        let room = t.len() - keep[i].0;
        let start = ceil_boundary(t, t.len() - tail.min(room));
        let sfx = t.len() - start;
        keep[i].1 = sfx;
        tail -= sfx;
        if sfx < room {
            break;
        }
    }
    keep
}

/// Truncates a tool result's text to at most `limit` bytes, marker included: the start and
/// the end of the output stay (errors are usually at the end), the middle is replaced by a
/// marker stating how many bytes went. Text blocks left empty are removed; other blocks stay.
/// Returns whether anything changed.
fn truncate_result(content: &mut Value, limit: u64) -> bool {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut texts: Vec<&mut String> = match content {
        Value::String(s) => vec![s],
        Value::Array(parts) => parts
            .iter_mut()
            .filter(|p| block_type(p) == Some("text"))
            .filter_map(|p| match p.get_mut("text") {
                Some(Value::String(s)) => Some(s),
                _ => None,
            })
            .collect(),
        _ => return false,
    };
    let total: usize = texts.iter().map(|s| s.len()).sum();
    if total <= limit || texts.iter().any(|s| is_truncated(s)) {
        return false;
    }
    // Room for the longest marker this result can get (removed <= total).
    let budget = limit.saturating_sub(marker(total, total).len());
    let plan = {
        let views: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        plan_cut(&views, budget)
    };
    let kept: usize = plan.iter().map(|(p, x)| p + x).sum();
    let m = marker(total - kept, total);
    let gap = plan
        .iter()
        .zip(&texts)
        .position(|(&(p, x), t)| p + x < t.len())
        .expect("the kept text is shorter than the total");
    for (i, (t, &(p, x))) in texts.iter_mut().zip(&plan).enumerate() {
        if p + x == t.len() {
            continue;
        }
        let tail = t[t.len() - x..].to_owned();
        t.truncate(p);
        if i == gap {
            t.push_str(&m);
        }
        t.push_str(&tail);
    }
    if let Value::Array(parts) = content {
        parts.retain(|p| {
            block_type(p) != Some("text") || p.get("text").and_then(Value::as_str) != Some("")
        });
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn opts() -> PruneOptions {
        PruneOptions::none()
    }

    #[test]
    fn truncation_is_bounded_and_idempotent() {
        let mut v = Value::String("é".repeat(5000));
        assert!(truncate_result(&mut v, 1000));
        let s = v.as_str().expect("string");
        assert!(s.len() <= 1000 && s.len() > 990, "{}", s.len());
        assert!(s.starts_with('é') && s.ends_with('é'));
        assert!(
            s.contains(" of 10000 bytes of tool output removed]\n"),
            "{s}"
        );
        assert!(!truncate_result(&mut v, 1000));
        assert!(!truncate_result(&mut v, 10));
        let mut tiny = Value::String("x".repeat(100));
        assert!(truncate_result(&mut tiny, 5));
        assert!(is_truncated(tiny.as_str().expect("string")));
        assert!(!truncate_result(&mut tiny, 5));
    }

    #[test]
    fn truncation_of_block_arrays_keeps_non_text_blocks() {
        let mut v: Value = serde_json::json!([
            {"type":"text","text":"a".repeat(600)},
            {"type":"image","source":{"type":"url"}},
            {"type":"text","text":"b".repeat(600)},
            {"type":"text","text":"c".repeat(600)}
        ]);
        assert!(truncate_result(&mut v, 1000));
        let parts = v.as_array().expect("array");
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[1]["type"], "image");
        assert!(parts[0]["text"].as_str().expect("head").starts_with('a'));
        assert!(parts[2]["text"].as_str().expect("tail").ends_with('c'));
        let total: usize = parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .map(str::len)
            .sum();
        assert!(total <= 1000);
        assert!(!truncate_result(&mut v, 1000));
    }

    #[test]
    fn read_results_dedupe_against_numbered_lines() {
        let body = "fn main() {\n    println!(\"hello, world and more text here, enough of it to count\");\n}\n";
        let mut numbered = String::new();
        for (i, l) in body.lines().enumerate() {
            writeln!(numbered, "{:>6}\u{2192}{l}", i + 1).expect("string write");
        }
        let mut v = serde_json::json!({
            "type":"user",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":numbered}]},
            "toolUseResult":{"type":"text","file":{"filePath":"/x.rs","content":body,"numLines":3}}
        });
        let mut o = opts();
        o.tool_use_result = ToolUseResultMode::Dedupe;
        let mut s = ContentStats::default();
        assert_eq!(transform(&mut v, &o, &mut s), Outcome::Changed);
        assert_eq!(v["toolUseResult"]["file"]["content"], DUPLICATE_MARKER);
        assert_eq!(v["toolUseResult"]["file"]["filePath"], "/x.rs");
        let mut s2 = ContentStats::default();
        assert_eq!(transform(&mut v, &o, &mut s2), Outcome::Unchanged);
    }

    #[test]
    fn images_become_placeholders() {
        let mut v = serde_json::json!({
            "type":"user",
            "message":{"content":[
                {"type":"text","text":"look"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD".repeat(100)}},
                {"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"QUJD"}}]}
            ]}
        });
        let mut o = opts();
        o.images = true;
        let mut s = ContentStats::default();
        assert_eq!(transform(&mut v, &o, &mut s), Outcome::Changed);
        assert_eq!(s.images.blocks, 2);
        assert_eq!(
            v["message"]["content"][1]["text"],
            "[skein prune: image removed, image/png, 300 bytes]"
        );
        assert_eq!(
            v["message"]["content"][2]["content"][0]["text"],
            "[skein prune: document removed, application/pdf, 3 bytes]"
        );
    }

    #[test]
    fn only_thinking_is_reported() {
        let mut v = serde_json::json!({"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm","signature":"c2ln"}]}});
        let mut o = opts();
        o.thinking = true;
        let mut s = ContentStats::default();
        assert_eq!(transform(&mut v, &o, &mut s), Outcome::OnlyThinking);
    }
}
